/**
 * The Bedrock Converse adapter against a cleartext HTTP/2 loopback server replaying Bedrock's wire
 * format: the request it signs for the lane's region, each kind of throttle, a rejected caller, a
 * 5xx, a timeout — and exactly one request each time (`maxAttempts: 1`).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createBedrockAdapter } from '../../../lib/providers/bedrock.js';
import { ProviderError } from '../../../lib/providers/model.js';
import { assertTimesOutOnce, type Canned, extraction, failure, json, loopback, type Loopback, RESULT, SCHEMA, stopAll, SYSTEM, USER } from './support.js';

afterEach(stopAll);

// ---------------------------------------------------------------------------------------------
// Bedrock Converse (tool carrying the JSON schema)

describe('Bedrock adapter', () => {
  const MODEL = 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0';
  const REGION = 'eu-central-1';
  const credentials = { accessKeyId: 'AKIDTESTTESTTEST', secretAccessKey: 'test-secret' };
  const adapterFor = (server: Loopback, timeoutMs = 5_000) =>
    createBedrockAdapter({ model: MODEL, region: REGION, endpoint: server.url, timeoutMs, credentials });
  const awsError = (status: number, type: string, message: string): Canned => ({
    status,
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'bc9af776-2940-485e-ba33-d7933e178873' },
    body: { message },
  });
  const iam = { apiKey: '' };
  const H2 = { http2: true };

  it('forces one tool whose inputSchema.json is the schema, signs for the lane region, and maps toolUse input and usage', async () => {
    // Prepare
    const server = await loopback(
      () => ({
        status: 200,
        headers: { 'x-amzn-requestid': 'e686a393-fd1a-4f8c-9ec0-3654e3d5ece3' },
        body: {
          output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_test', name: 'invoice_v1', input: RESULT } }] } },
          stopReason: 'tool_use',
          usage: { inputTokens: 512, outputTokens: 48, totalTokens: 560 },
          metrics: { latencyMs: 812 },
        },
      }),
      H2,
    );
    // Act
    const response = await adapterFor(server).extract(extraction({ ...iam, maxOutputTokens: 800 }));
    // Assess
    assert.deepEqual(JSON.parse(response.content), RESULT);
    assert.deepEqual(response.usage, { inputTokens: 512, outputTokens: 48 });
    assert.equal(response.model, MODEL);
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.ok(sent);
    assert.equal(sent.method, 'POST');
    assert.equal(decodeURIComponent(sent.path), `/model/${MODEL}/converse`);
    assert.match(String(sent.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTEST/\\d{8}/${REGION}/bedrock/aws4_request`));
    const body = json(sent.body);
    assert.deepEqual(body.system, [{ text: SYSTEM }]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ text: USER }] }]);
    assert.deepEqual(body.inferenceConfig, { maxTokens: 800 });
    const toolConfig = body.toolConfig as { tools: Array<{ toolSpec: { name: string; inputSchema: { json: unknown } } }>; toolChoice: unknown };
    assert.equal(toolConfig.tools.length, 1);
    assert.equal(toolConfig.tools[0]?.toolSpec.name, 'invoice_v1');
    assert.deepEqual(toolConfig.tools[0]?.toolSpec.inputSchema.json, SCHEMA);
    assert.deepEqual(toolConfig.toolChoice, { tool: { name: 'invoice_v1' } });
  });

  it('sends a Bedrock API key as a bearer token', async () => {
    // Prepare
    const server = await loopback(
      () => ({
        status: 200,
        body: {
          output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'invoice_v1', input: RESULT } }] } },
          stopReason: 'tool_use',
          usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          metrics: { latencyMs: 1 },
        },
      }),
      H2,
    );
    // Act
    await adapterFor(server).extract(extraction({ apiKey: 'ABSKbedrock-api-key-test' }));
    // Assess
    assert.equal(server.requests[0]?.headers.authorization, 'Bearer ABSKbedrock-api-key-test');
  });

  it('maps ThrottlingException "Too many tokens" to rate_limit, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => awsError(429, 'ThrottlingException', 'Too many tokens, please wait before trying again.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 429);
    assert.equal(failed.provider, 'bedrock');
    assert.equal(failed.classification.kind, 'rate_limit');
    assert.equal(failed.classification.retryAfterMs, null, 'Bedrock states no wait');
    assert.equal(server.requests.length, 1, 'the SDK did not retry the throttle');
  });

  it('maps ThrottlingException "Too many tokens per day" to quota_exhausted', async () => {
    // Prepare
    const server = await loopback(() => awsError(429, 'ThrottlingException', 'Too many tokens per day, please wait before trying again.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.classification.kind, 'quota_exhausted');
  });

  it('maps ServiceQuotaExceededException to quota_exhausted', async () => {
    // Prepare
    const server = await loopback(
      () =>
        awsError(
          400,
          'ServiceQuotaExceededException',
          'Your request exceeds the service quota for your account. You can view your quotas at https://console.aws.amazon.com/servicequotas.',
        ),
      H2,
    );
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 400);
    assert.equal(failed.classification.kind, 'quota_exhausted');
  });

  it('maps a 401 to auth with no wait, sending one request only', async () => {
    // Prepare
    const server = await loopback(() => awsError(401, 'UnauthorizedException', 'Authentication failed: Please make sure your API Key is valid.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction({ apiKey: 'ABSKrevoked' }));
    // Assess
    assert.equal(failed.status, 401);
    assert.equal(failed.provider, 'bedrock');
    assert.deepEqual(failed.classification, { kind: 'auth', retryAfterMs: null, resetAt: null });
    assert.equal(server.requests.length, 1, 'the SDK did not retry the 401');
  });

  it('maps 403 UnrecognizedClientException and AccessDeniedException for the caller to auth, for a model to not_rate_limit', async () => {
    // Prepare
    const answers = [
      awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.'),
      awsError(403, 'AccessDeniedException', 'Your account is not authorized to invoke this API operation.'),
      awsError(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID."),
    ];
    let call = 0;
    const server = await loopback(() => answers[call++] ?? answers[0]!, H2);
    // Act
    const kinds: string[] = [];
    for (let i = 0; i < answers.length; i++) kinds.push((await failure(adapterFor(server), ProviderError, extraction(iam))).classification.kind);
    // Assess
    assert.deepEqual(kinds, ['auth', 'auth', 'not_rate_limit']);
    assert.equal(server.requests.length, answers.length, 'one request per call');
  });

  it('maps ServiceUnavailableException and ModelNotReadyException to overloaded without retrying', async () => {
    // Prepare
    const unavailable = await loopback(() => awsError(503, 'ServiceUnavailableException', 'Too many connections, please wait before trying again.'), H2);
    const notReady = await loopback(() => awsError(429, 'ModelNotReadyException', 'Model is not ready for inference. Wait and try your request again.'), H2);
    // Act
    const first = await failure(adapterFor(unavailable), ProviderError, extraction(iam));
    const second = await failure(adapterFor(notReady), ProviderError, extraction(iam));
    // Assess
    assert.equal(first.status, 503);
    assert.equal(first.classification.kind, 'overloaded');
    assert.equal(second.classification.kind, 'overloaded');
    assert.equal(unavailable.requests.length, 1);
    assert.equal(notReady.requests.length, 1);
  });

  it('maps InternalServerException to not_rate_limit without retrying', async () => {
    // Prepare
    const server = await loopback(() => awsError(500, 'InternalServerException', 'The server encountered an internal error while processing the request.'), H2);
    // Act
    const failed = await failure(adapterFor(server), ProviderError, extraction(iam));
    // Assess
    assert.equal(failed.status, 500);
    assert.equal(failed.classification.kind, 'not_rate_limit');
    assert.equal(server.requests.length, 1);
  });

  it('gives up at its timeout when the server never answers, once', async (t) => {
    // Prepare
    const server = await loopback(() => 'hang', H2);
    // Act + Assess
    await assertTimesOutOnce(t, adapterFor(server, 250), () => server.requests.length, 250, extraction(iam));
  });
});
