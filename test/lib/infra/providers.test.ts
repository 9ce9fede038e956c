/**
 * Every provider kind the lane config accepts, as the stack deploys it: what the consumer role may
 * call on the provider side (Bedrock with IAM auth: `bedrock:InvokeModel` on exactly the lane's
 * model, in its region or through a profile of its geography), whether a provider-keys secret exists
 * (only when the provider reads keys), and which configs are refused at synth with a clear error
 * (Vertex AI, a Bedrock profile of another geography or a global one, a function timeout too short,
 * batches on a provider ratelane has no batch client for).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AwsSolutionsChecks } from 'cdk-nag';
import { modelEndpointHost } from '../../../lib/config/endpoints.js';
import { DEFAULT_LANES, LaneConfigError, type LaneOverride, resolveLane } from '../../../lib/config/lanes.js';
import { CONSUMER_ENV } from '../../../lib/platform/environment.js';
import { ACCOUNT, actionsOf, logicalId, partitionArn, regionsNamed, roleStatements, type Statement, type Synthesized, synthLane } from './support.js';

/** What a synthesized lane gives its consumer on the provider side. */
function providerSide({ stack, json }: Synthesized) {
  const statements = roleStatements(json, logicalId(stack, stack.consumer.role));
  const fn = json.Resources[logicalId(stack, stack.consumer.function)].Properties.Environment.Variables as Record<string, unknown>;
  return {
    bedrock: statements.filter((s) => actionsOf(s).some((a) => a.startsWith('bedrock:'))),
    secretGrants: statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:'))),
    secrets: Object.values<any>(json.Resources).filter((r) => r.Type === 'AWS::SecretsManager::Secret'),
    secretEnv: fn[CONSUMER_ENV.providerSecretArn],
  };
}

/**
 * Provider kinds that read keys; `batch`: whether ratelane has a batch client for it (else the lane turns
 * batches off). Each lane attests where its model host processes (`modelEndpoints`), as an operator would.
 */
const KEYED: Array<[string, LaneOverride['provider'], { batch: boolean }]> = [
  ['openai-compatible', { kind: 'openai-compatible', model: 'gpt-4o-mini' }, { batch: true }],
  [
    'openai-compatible (Azure OpenAI)',
    {
      kind: 'openai-compatible',
      model: 'gpt-4o-mini',
      azure: { endpoint: 'https://ratelane.openai.azure.com', deployment: 'extract', apiVersion: '2024-10-21' },
    },
    { batch: false },
  ],
  ['anthropic', { kind: 'anthropic', model: 'claude-sonnet-4-5' }, { batch: false }],
  ['gemini (Gemini API)', { kind: 'gemini', model: 'gemini-2.5-flash' }, { batch: false }],
  ['bedrock with auth api-key', { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0', auth: 'api-key' }, { batch: true }],
];

/** What the operator attests for `provider`'s model host in `lane`: it processes in the lane's geography. */
function attested(lane: 'us' | 'eu', provider: LaneOverride['provider']): LaneOverride['modelEndpoints'] {
  const host = modelEndpointHost(resolveLane({ name: lane, region: DEFAULT_LANES[lane]!.region, provider }));
  return [{ host, geography: lane, note: 'attested by the test' }];
}

describe('provider kinds in the lane stack', () => {
  for (const [label, provider, { batch }] of KEYED) {
    it(`${label}: a provider-keys secret the consumer may read, no IAM grant on any model, batches only where the provider has a batch API`, () => {
      // Prepare: the lane's batch settings left to their default
      const synthesized = synthLane('us', { provider, modelEndpoints: attested('us', provider) });
      // Act
      const side = providerSide(synthesized);
      // Assess
      assert.equal(side.secrets.length, 1);
      assert.equal(side.secrets[0].Properties.Name, 'ratelane/us/provider-keys');
      assert.deepEqual(side.secretEnv, { Ref: logicalId(synthesized.stack, synthesized.stack.storage.providerSecret) });
      assert.deepEqual(side.secretGrants.map(actionsOf), [['secretsmanager:GetSecretValue']]);
      assert.deepEqual(side.bedrock, [], 'the key authenticates the call');
      assert.equal(synthesized.stack.batch !== undefined, batch, 'batches on by default exactly where ratelane has a batch client');
    });
  }

  it('bedrock with IAM auth (the default) and a foundation model: InvokeModel on that model in the lane region, no secret at all', () => {
    // Prepare
    const model = 'anthropic.claude-3-haiku-20240307-v1:0';
    const synthesized = synthLane('us', { provider: { kind: 'bedrock', model } });
    // Act
    const side = providerSide(synthesized);
    // Assess
    assert.deepEqual(side.bedrock, [
      { Sid: 'InvokeModel', Effect: 'Allow', Action: 'bedrock:InvokeModel', Resource: partitionArn(`:bedrock:us-east-1::foundation-model/${model}`) },
    ]);
    assert.deepEqual(side.secrets, [], 'the function role signs: no secret to create, set or rotate');
    assert.equal(side.secretEnv, undefined);
    assert.deepEqual(side.secretGrants, []);
    assert.equal(synthesized.json.Outputs.ProviderSecretName, undefined);
  });

  it('bedrock with IAM auth and a profile of the lane geography: the profile in the lane region, the model only through it', () => {
    // Prepare
    const model = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
    const synthesized = synthLane('eu', { provider: { kind: 'bedrock', model: `eu.${model}` } });
    const profileArn = partitionArn(`:bedrock:eu-central-1:${ACCOUNT}:inference-profile/eu.${model}`);
    // Act
    const side = providerSide(synthesized);
    const text = JSON.stringify(synthesized.json);
    // Assess
    assert.deepEqual(side.bedrock, [
      { Sid: 'InvokeInferenceProfile', Effect: 'Allow', Action: 'bedrock:InvokeModel', Resource: profileArn },
      {
        Sid: 'InvokeModelThroughProfile',
        Effect: 'Allow',
        Action: 'bedrock:InvokeModel',
        Resource: partitionArn(`:bedrock:*::foundation-model/${model}`),
        Condition: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
      },
    ] satisfies Statement[]);
    assert.deepEqual(side.secrets, []);
    assert.deepEqual([...regionsNamed(text)], ['eu-central-1'], 'the template names no destination region: AWS routes within the geography');
  });

  it('bedrock with a profile: cdk-nag passes with one acknowledgement, for the foundation model in the profile regions', () => {
    // Prepare
    const model = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
    const { app } = synthLane('us', { provider: { kind: 'bedrock', model: `us.${model}` } });
    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    assert.deepEqual(
      report.violations.map((v) => v.ruleName),
      [],
    );
  });

  const refused: Array<[string, string, LaneOverride, RegExp]> = [
    [
      'gemini on Vertex AI (no Google credentials in the function)',
      'us',
      { provider: { kind: 'gemini', model: 'gemini-2.5-flash', vertex: { project: 'ratelane-prod', location: 'us-central1' } } },
      /lane us: provider kind gemini with vertex cannot be deployed: .*drop provider\.vertex/,
    ],
    [
      'a Bedrock profile of another geography',
      'us',
      { provider: { kind: 'bedrock', model: 'eu.anthropic.claude-3-7-sonnet-20250219-v1:0' } },
      /lane us: Bedrock model "eu\.anthropic\.claude-3-7-sonnet-20250219-v1:0" is a cross-region inference profile of geography "eu", but the lane's region us-east-1 is in "us".*use "us\.anthropic\.claude-3-7-sonnet-20250219-v1:0"/,
    ],
    [
      'a global Bedrock profile',
      'eu',
      { provider: { kind: 'bedrock', model: 'global.anthropic.claude-sonnet-4-5-20250929-v1:0' } },
      /lane eu: Bedrock model "global\..*" is a global inference profile, which may run the model in any commercial region/,
    ],
    [
      'a Bedrock ARN',
      'us',
      { provider: { kind: 'bedrock', model: 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc' } },
      /lane us: Bedrock model "arn:.*" is an ARN/,
    ],
    [
      'a lane asked to take batches whose provider has no batch client (Anthropic)',
      'us',
      {
        provider: { kind: 'anthropic', model: 'claude-sonnet-4-5' },
        batch: { enabled: true },
        modelEndpoints: [{ host: 'api.anthropic.com', geography: 'us' }],
      },
      /lane us: batch\.enabled is true, but ratelane has no batch client for provider anthropic; .*set batch\.enabled to false for this lane/,
    ],
    [
      'a lane asked to take batches on Azure OpenAI',
      'eu',
      {
        provider: {
          kind: 'openai-compatible',
          model: 'gpt-4o-mini',
          azure: { endpoint: 'https://ratelane.openai.azure.com', deployment: 'extract', apiVersion: '2024-10-21' },
        },
        batch: { enabled: true },
        modelEndpoints: [{ host: 'ratelane.openai.azure.com', geography: 'eu' }],
      },
      /lane eu: batch\.enabled is true, but ratelane has no batch client for provider openai-compatible \(Azure OpenAI\)/,
    ],
    [
      'a function timeout shorter than the provider timeout x (1 + repairs) + margin',
      'us',
      { provider: { timeoutMs: 40_000 } },
      /lane us: consumer\.timeoutSeconds 60 s cannot hold one record: provider\.timeoutMs 40000 ms x 2 calls \(1 \+ 1 repair\) \+ 5 s margin = 85 s; raise consumer\.timeoutSeconds to at least 85 \(and queue\.visibilityTimeoutSeconds to at least 510\), or lower provider\.timeoutMs to at most 27500/,
    ],
  ];
  for (const [label, name, override, message] of refused) {
    it(`refuses at synth: ${label}`, () => {
      // Act / Assess
      assert.throws(
        () => synthLane(name, override),
        (error: unknown) => error instanceof LaneConfigError && message.test(error.message),
      );
    });
  }
});
