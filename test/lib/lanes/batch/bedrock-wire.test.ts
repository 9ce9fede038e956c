/**
 * The Bedrock batch client on the wire: a loopback server speaks Bedrock's control plane (restJson1
 * over HTTP/1.1) and records what the SDK sends — CreateModelInvocationJob, GetModelInvocationJob,
 * StopModelInvocationJob (method, path, JSON body, SigV4 for the lane's region), exactly one request
 * per call — while fauxqs plays S3: the input file the client writes, and a Bedrock-shaped output
 * folder (`<output>/<jobId>/<n>.jsonl.out` + `manifest.json.out`) read back into result lines.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createAwsClients, type AwsClients } from '../../../../lib/platform/clients.js';
import { BEDROCK_ANTHROPIC_VERSION, createBedrockBatchProvider } from '../../../../lib/lanes/batch/providers/bedrock.js';
import { BatchInputRejectedError, BatchJobNotFinishedError, BatchSubmitThrottledError } from '../../../../lib/lanes/batch/providers/errors.js';
import type { BatchProvider, BatchRequest, ProviderJobHandle, ProviderResultLine } from '../../../../lib/lanes/batch/providers/provider.js';
import { getExtractionPrompt, getExtractionSchema } from '../../../../lib/contract/schemas/registry.js';
import { testEndpoints, uniqueName } from '../../../helpers/endpoints.js';
import { json, loopback, type Canned, type Loopback, type SeenRequest, stopAll } from '../../providers/support.js';

const REGION = 'us-east-1';
const MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0';
const ROLE = 'arn:aws:iam::123456789012:role/ratelane-us-batch';
const JOB_ID = 'k3x9p2q7r1s5';
const JOB_ARN = `arn:aws:bedrock:${REGION}:123456789012:model-invocation-job/${JOB_ID}`;
const credentials = { accessKeyId: 'AKIDTESTTESTTEST', secretAccessKey: 'test-secret' };
const schema = getExtractionSchema('invoice@1');
const prompt = getExtractionPrompt('invoice@1', 'invoice-extract@1')!;

let aws: AwsClients;
let bucket: string;
before(async () => {
  aws = createAwsClients(REGION, testEndpoints());
  bucket = uniqueName('rl-batch');
  await aws.s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
after(() => aws.destroy());
afterEach(stopAll);

const requests = (n: number): BatchRequest[] =>
  Array.from({ length: n }, (_, i) => ({
    recordId: `job-${i}`,
    messages: prompt.buildMessages(`Invoice INV-${i}\nTotal ${i}.00 EUR`),
    jsonSchemaName: schema.jsonSchemaName,
    jsonSchema: schema.jsonSchema,
    model: MODEL,
  }));

function client(server: Loopback, minRecordsPerJob = 2): BatchProvider {
  return createBedrockBatchProvider({
    region: REGION,
    bucket,
    roleArn: ROLE,
    s3: aws.s3,
    endpoint: server.url,
    credentials,
    timeoutMs: 5_000,
    limits: { minRecordsPerJob },
  });
}

const awsError = (status: number, type: string, message: string): Canned => ({
  status,
  headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'a1b2c3d4-0000-4000-8000-000000000000' },
  body: { message },
});
const jobBody = (status: string, batchId: string) => ({
  jobArn: JOB_ARN,
  jobName: `rl-0-${batchId}`,
  modelId: MODEL,
  roleArn: ROLE,
  status,
  submitTime: '2026-12-01T10:00:00Z',
  lastModifiedTime: '2026-12-01T10:30:00Z',
  inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://${bucket}/batch/${batchId}/input/0.jsonl`, s3InputFormat: 'JSONL' } },
  outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://${bucket}/batch/${batchId}/output/` } },
  timeoutDurationInHours: 24,
  modelInvocationType: 'InvokeModel',
  totalRecordCount: 4,
  processedRecordCount: 4,
  successRecordCount: 2,
  errorRecordCount: 1,
});

/** Answers like Bedrock's control plane: create → the ARN, get → the job in `state()`, stop → {}. */
function controlPlane(batchId: () => string, state: () => string) {
  return (request: SeenRequest): Canned => {
    if (request.method === 'POST' && request.path === '/model-invocation-job') return { status: 200, body: { jobArn: JOB_ARN } };
    if (request.method === 'GET') return { status: 200, body: jobBody(state(), batchId()) };
    return { status: 200, body: {} };
  };
}

async function collect(lines: AsyncIterable<ProviderResultLine>): Promise<ProviderResultLine[]> {
  const out: ProviderResultLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('Bedrock batch client on the wire', () => {
  it('writes the input JSONL to the lane bucket and sends CreateModelInvocationJob as the SDK does, once', async () => {
    // Prepare
    const server = await loopback(
      controlPlane(
        () => '',
        () => 'Submitted',
      ),
    );
    const provider = client(server);
    const [input] = provider.prepare(requests(3), { batchId: 'b-wire-1' });
    // Act
    const handle = await provider.submit(input!);
    // Assess: the request
    assert.equal(server.requests.length, 1);
    const [sent] = server.requests;
    assert.equal(sent?.method, 'POST');
    assert.equal(sent?.path, '/model-invocation-job');
    assert.match(String(sent?.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=AKIDTESTTESTTEST/\\d{8}/${REGION}/bedrock/aws4_request`));
    const body = json(sent!.body);
    assert.equal(body.jobName, 'rl-0-b-wire-1');
    assert.equal(body.roleArn, ROLE);
    assert.equal(body.modelId, MODEL);
    assert.equal(body.modelInvocationType, 'InvokeModel');
    assert.equal(body.timeoutDurationInHours, 24);
    assert.match(String(body.clientRequestToken), /^[0-9a-f]{64}$/);
    assert.deepEqual(body.inputDataConfig, { s3InputDataConfig: { s3Uri: `s3://${bucket}/batch/b-wire-1/input/0.jsonl`, s3InputFormat: 'JSONL' } });
    assert.deepEqual(body.outputDataConfig, { s3OutputDataConfig: { s3Uri: `s3://${bucket}/batch/b-wire-1/output/` } });
    // Assess: the handle and the file in S3
    assert.equal(handle.jobId, JOB_ARN);
    assert.deepEqual(handle.recordIds, ['job-0', 'job-1', 'job-2']);
    const object = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'batch/b-wire-1/input/0.jsonl' }));
    const lines = (await object.Body!.transformToString()).trimEnd().split('\n');
    assert.deepEqual(lines, input!.lines);
    const first = JSON.parse(lines[0]!);
    assert.equal(first.recordId, 'job-0');
    assert.equal(first.modelInput.anthropic_version, BEDROCK_ANTHROPIC_VERSION);
    assert.deepEqual(first.modelInput.tool_choice, { type: 'tool', name: schema.jsonSchemaName });
  });

  it('sends GetModelInvocationJob and StopModelInvocationJob on the job ARN', async () => {
    const server = await loopback(
      controlPlane(
        () => 'b-wire-2',
        () => 'InProgress',
      ),
    );
    const provider = client(server);
    const handle: ProviderJobHandle = {
      provider: 'bedrock',
      batchId: 'b-wire-2',
      index: 0,
      model: MODEL,
      jobId: JOB_ARN,
      inputRef: `s3://${bucket}/batch/b-wire-2/input/0.jsonl`,
      outputRef: `s3://${bucket}/batch/b-wire-2/output/`,
      recordIds: ['job-0'],
    };
    // Act
    const status = await provider.status(handle);
    await provider.cancel(handle);
    await assert.rejects(collect(provider.readResults(handle)), BatchJobNotFinishedError);
    // Assess
    const seen = server.requests.map((r) => [r.method, decodeURIComponent(r.path)]);
    assert.deepEqual(seen, [
      ['GET', `/model-invocation-job/${JOB_ARN}`],
      ['POST', `/model-invocation-job/${JOB_ARN}/stop`],
      ['GET', `/model-invocation-job/${JOB_ARN}`],
    ]);
    assert.equal(status.state, 'in_progress');
    assert.deepEqual(status.counts, { total: 4, succeeded: 2, failed: 1 });
    assert.equal(status.outputRef, `s3://${bucket}/batch/b-wire-2/output/${JOB_ID}/`);
  });

  it('reads a Bedrock-shaped output folder from S3 into result lines', async () => {
    // Prepare: the job ran; Bedrock wrote <output>/<jobId>/0.jsonl.out and the manifest
    const server = await loopback(
      controlPlane(
        () => 'b-wire-3',
        () => 'PartiallyCompleted',
      ),
    );
    const provider = client(server);
    const [input] = provider.prepare(requests(4), { batchId: 'b-wire-3' });
    const handle = await provider.submit(input!);
    const modelInput = JSON.parse(input!.lines[0]!).modelInput;
    const out = [
      {
        recordId: 'job-1',
        modelInput,
        modelOutput: {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'invoice_v1', input: { invoiceNumber: 'INV-1' } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 900, output_tokens: 60 },
        },
      },
      { recordId: 'job-0', modelInput, error: { errorCode: 400, errorMessage: 'Malformed input request' } },
      { recordId: 'job-9', modelInput, modelOutput: { content: [{ type: 'text', text: '{}' }] } },
      {
        recordId: 'job-2',
        modelInput,
        modelOutput: {
          content: [{ type: 'tool_use', name: 'invoice_v1', input: { invoiceNumber: 'INV-2' } }],
          usage: { input_tokens: 800, output_tokens: 50 },
        },
      },
    ];
    const folder = `batch/b-wire-3/output/${JOB_ID}/`;
    const text = `${out.map((line) => JSON.stringify(line)).join('\n')}\n{"recordId": "job-3", "modelOutput": \n`;
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${folder}0.jsonl.out`, Body: text }));
    const manifest = { totalRecordCount: 4, processedRecordCount: 4, successRecordCount: 2, errorRecordCount: 2, inputTokenCount: 1700, outputTokenCount: 110 };
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${folder}manifest.json.out`, Body: JSON.stringify(manifest) }));
    // Act
    const lines = await collect(provider.readResults(handle));
    // Assess
    assert.deepEqual(
      lines.map((l) => [l.recordId, l.ok ? l.content : l.code]),
      [
        ['job-1', '{"invoiceNumber":"INV-1"}'],
        ['job-0', '400'],
        [null, 'unknown_id'],
        ['job-2', '{"invoiceNumber":"INV-2"}'],
        [null, 'not_json'],
        ['job-3', 'no_result'],
      ],
    );
    const first = lines[0];
    assert.ok(first?.ok);
    assert.deepEqual(first.usage, { inputTokens: 900, outputTokens: 60 });
    assert.deepEqual(
      server.requests.map((r) => r.method),
      ['POST', 'GET'],
    );
  });

  it("rewrites an ended job's output files without erased records, and leaves a running job's alone", async () => {
    // Prepare: a job whose output Bedrock wrote after its source was erased
    let state = 'InProgress';
    const server = await loopback(
      controlPlane(
        () => 'b-wire-erase',
        () => state,
      ),
    );
    const provider = client(server);
    const [input] = provider.prepare(requests(3), { batchId: 'b-wire-erase' });
    const handle = await provider.submit(input!);
    const folder = `batch/b-wire-erase/output/${JOB_ID}/`;
    const line = (id: string) => JSON.stringify({ recordId: id, modelOutput: { content: [{ type: 'text', text: '{}' }] } });
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${folder}0.jsonl.out`, Body: ['job-0', 'job-1', 'job-2'].map(line).join('\n') }));
    const read = async (key: string) => (await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    // Act
    const running = await provider.eraseRecords([handle], new Set(['job-1'])).catch((error: unknown) => error);
    state = 'Completed';
    const erased = await provider.eraseRecords([handle], new Set(['job-1']));
    const again = await provider.eraseRecords([handle], new Set(['job-1']));
    // Assess
    assert.ok(running instanceof BatchJobNotFinishedError);
    assert.deepEqual(erased, { filesDeleted: [], filesRewritten: [`${folder}0.jsonl.out`], linesRemoved: 1, tooLarge: [], refused: [] });
    assert.equal(await read(`${folder}0.jsonl.out`), ['job-0', 'job-2'].map(line).join('\n'));
    assert.deepEqual([again.filesRewritten, again.linesRemoved], [[], 0], 'nothing more to remove');
    assert.equal(await read('batch/b-wire-erase/input/0.jsonl'), `${input!.lines.join('\n')}\n`, "the input is the erasure's to rewrite, not the reconciler's");
  });

  it('maps a throttled, an over-quota and an invalid CreateModelInvocationJob, sending one request each', async () => {
    // Prepare
    const answers = [
      awsError(429, 'ThrottlingException', 'Rate exceeded'),
      awsError(400, 'ServiceQuotaExceededException', 'You have exceeded the number of batch inference jobs that can be in progress or submitted.'),
      awsError(400, 'ValidationException', 'The provided model identifier is invalid.'),
    ];
    let call = 0;
    const server = await loopback(() => answers[call++] ?? answers[0]!);
    const provider = client(server);
    const [input] = provider.prepare(requests(2), { batchId: 'b-wire-4' });
    // Act
    const errors: unknown[] = [];
    for (let i = 0; i < answers.length; i++) errors.push(await provider.submit(input!).catch((error: unknown) => error));
    // Assess
    const [throttled, overQuota, invalid] = errors;
    assert.ok(throttled instanceof BatchSubmitThrottledError);
    assert.equal(throttled.reason, 'rate_limit');
    assert.equal(throttled.status, 429);
    assert.ok(overQuota instanceof BatchSubmitThrottledError);
    assert.equal(overQuota.reason, 'concurrent_jobs');
    assert.ok(invalid instanceof BatchInputRejectedError);
    assert.equal(invalid.code, 'ValidationException');
    assert.equal(server.requests.length, answers.length, 'the SDK did not retry');
  });
});
