import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assertDeployable,
  bedrockModelTarget,
  CONSUMER_REPAIR_ATTEMPTS,
  checkFunctionTimeout,
  DEFAULT_LANES,
  deploymentProblems,
  INVOCATION_MARGIN_SECONDS,
  LaneConfigError,
  laneByName,
  laneSetOf,
  resolveLane,
  laneInAccount,
  requiredFunctionTimeoutSeconds,
  resolveLanes,
} from '../../../lib/config/lanes.js';

describe('lane config', () => {
  it('has us in us-east-1 and eu in eu-central-1 by default', () => {
    // Act
    const lanes = resolveLanes();
    // Assess
    assert.equal(lanes.us?.region, 'us-east-1');
    assert.equal(lanes.eu?.region, 'eu-central-1');
    assert.deepEqual(Object.keys(lanes), ['us', 'eu']);
  });

  it('renames the bucket with the region when a region is overridden', () => {
    const lanes = resolveLanes({ eu: { region: 'eu-west-1' } });
    assert.equal(lanes.eu?.resources.bucketName, 'ratelane-eu-source-eu-west-1');
    assert.equal(DEFAULT_LANES.eu?.region, 'eu-central-1');
  });

  it('rejects a batch size over SQS limit of 10', () => {
    assert.throws(() => resolveLanes({ us: { queue: { batchSize: 11 } } }), LaneConfigError);
  });

  it('rejects a visibility timeout under 6x the function timeout', () => {
    assert.throws(() => resolveLanes({ us: { queue: { visibilityTimeoutSeconds: 100 }, consumer: { timeoutSeconds: 60 } } }), /at least 6x/);
  });

  it('takes reserved concurrency only when it covers the mapping maximum concurrency', () => {
    assert.equal(resolveLanes().us?.consumer.reservedConcurrency, undefined);
    assert.equal(resolveLanes({ us: { consumer: { reservedConcurrency: 8, maximumConcurrency: 5 } } }).us?.consumer.reservedConcurrency, 8);
    assert.throws(() => resolveLanes({ us: { consumer: { reservedConcurrency: 3, maximumConcurrency: 5 } } }), /at least maximumConcurrency/);
  });

  it('takes producers that may state tenants by IAM unique id, and names the field of a malformed one', () => {
    // Act
    const lanes = resolveLanes({ us: { producers: [{ senderId: 'AROAPRODUCERA00000001', tenants: ['team-a', '*'], note: 'svc-a' }] } });
    // Assess
    assert.deepEqual(lanes.us!.producers, [{ senderId: 'AROAPRODUCERA00000001', tenants: ['team-a', '*'], note: 'svc-a' }]);
    assert.equal(DEFAULT_LANES.us!.producers, undefined, 'no producer may state a tenant by default');
    assert.throws(
      () => resolveLanes({ us: { producers: [{ senderId: 'arn:aws:iam::123456789012:role/svc-a', tenants: ['team-a'] }] } }),
      (e: Error) => e instanceof LaneConfigError && /producers\[0\]\.senderId/.test(e.message) && /unique id/.test(e.message),
    );
    assert.throws(
      () => resolveLanes({ us: { producers: [{ senderId: 'AROAPRODUCERA00000001', tenants: [] }] } }),
      (e: Error) => e instanceof LaneConfigError && /producers\[0\]\.tenants/.test(e.message),
    );
  });

  it('declares a new lane from its name and region, defaults for the rest; a set refuses two of one name or region', () => {
    // Act
    const apac = resolveLane({ name: 'apac', region: 'ap-southeast-2', live: { enabled: false } });
    // Assess
    assert.equal(apac.resources.queueName, 'ratelane-apac-jobs');
    assert.equal(apac.live.enabled, false);
    assert.equal(apac.provider.kind, DEFAULT_LANES.us!.provider.kind);
    assert.deepEqual(resolveLane(apac), apac, 'a complete lane comes back as it is');
    assert.throws(
      () => resolveLane({ name: 'apac', region: 'nowhere' }),
      (e: Error) => e instanceof LaneConfigError && /region/.test(e.message),
    );
    assert.throws(() => resolveLane({ name: 'A', region: 'us-east-1' }), LaneConfigError);
    assert.throws(() => laneSetOf([apac, apac]), /two lanes are named "apac"/);
    assert.throws(() => laneSetOf([apac, { ...apac, name: 'apac2' }]), /share a region/);
  });

  it('rejects two lanes in one region and unknown lanes', () => {
    assert.throws(() => resolveLanes({ eu: { region: 'us-east-1' } }), /share a region/);
    assert.throws(() => resolveLanes({ ap: { region: 'ap-south-1' } }), /unknown lane/);
    assert.throws(() => laneByName(resolveLanes(), 'mars'), /unknown region lane "mars"; known lanes: us, eu/);
  });

  it('alarms on a job older than an hour by default, and never below the message-age threshold', () => {
    assert.equal(resolveLanes().us?.alarms.oldestJobAgeSeconds, 3600);
    assert.equal(resolveLanes({ eu: { alarms: { oldestJobAgeSeconds: 7200 } } }).eu?.alarms.oldestJobAgeSeconds, 7200);
    assert.throws(
      () => resolveLanes({ us: { alarms: { oldestJobAgeSeconds: 600 } } }),
      /at least alarms\.oldestMessageAgeSeconds \(900\)[\s\S]*at alarms\.oldestJobAgeSeconds/,
    );
  });
});

describe('lane config: what a deployed lane must satisfy', () => {
  it('fits one record in the default function timeout: provider timeout x (1 call + 1 repair) + 5 s', () => {
    // Prepare
    const lane = resolveLanes().us!;
    // Act
    const required = requiredFunctionTimeoutSeconds(lane);
    // Assess
    assert.equal(CONSUMER_REPAIR_ATTEMPTS, 1);
    assert.equal(INVOCATION_MARGIN_SECONDS, 5);
    assert.equal(required, 25 * 2 + 5);
    assert.ok(lane.consumer.timeoutSeconds >= required);
    assert.equal(checkFunctionTimeout(lane), undefined);
    for (const l of Object.values(DEFAULT_LANES)) assert.deepEqual(deploymentProblems(l), []);
  });

  it('refuses a function timeout one record does not fit, naming the lane, the numbers and what to change', () => {
    // Prepare
    const exact = resolveLanes({ us: { provider: { timeoutMs: 27_500 } } }).us!;
    const over = resolveLanes({ us: { provider: { timeoutMs: 27_501 } } }).us!;
    const long = resolveLanes({ eu: { provider: { timeoutMs: 600_000 } } }).eu!;
    // Act / Assess
    assert.equal(checkFunctionTimeout(exact), undefined, '2 x 27.5 s + 5 s = 60 s fits exactly');
    assert.equal(
      checkFunctionTimeout(over),
      'lane us: consumer.timeoutSeconds 60 s cannot hold one record: provider.timeoutMs 27501 ms x 2 calls (1 + 1 repair) + 5 s margin = 61 s; ' +
        'raise consumer.timeoutSeconds to at least 61 (and queue.visibilityTimeoutSeconds to at least 366), or lower provider.timeoutMs to at most 27500',
    );
    assert.match(checkFunctionTimeout(long) ?? '', /= 1205 s; the Lambda maximum of 900 s cannot hold it, or lower provider\.timeoutMs to at most 27500$/);
    assert.throws(
      () => assertDeployable(over),
      (e: unknown) => e instanceof LaneConfigError && /^lane us cannot be deployed:\n- lane us: consumer\.timeoutSeconds 60 s/.test(e.message),
    );
    // tests and local runs keep their short timeouts: the schema does not apply this check
    assert.doesNotThrow(() => resolveLanes({ us: { consumer: { timeoutSeconds: 5 }, queue: { visibilityTimeoutSeconds: 30 } } }));
  });

  it('reads a Bedrock model id as a foundation model or a cross-region profile of the lane geography', () => {
    // Prepare
    const us = { name: 'us', region: 'us-east-1' };
    const eu = { name: 'eu', region: 'eu-central-1' };
    // Act / Assess
    assert.deepEqual(bedrockModelTarget(us, 'amazon.nova-lite-v1:0'), { kind: 'foundation-model', modelId: 'amazon.nova-lite-v1:0' });
    assert.deepEqual(bedrockModelTarget(us, 'us.anthropic.claude-3-haiku-20240307-v1:0'), {
      kind: 'inference-profile',
      profileId: 'us.anthropic.claude-3-haiku-20240307-v1:0',
      geography: 'us',
      modelId: 'anthropic.claude-3-haiku-20240307-v1:0',
    });
    assert.equal(bedrockModelTarget(eu, 'eu.amazon.nova-pro-v1:0').kind, 'inference-profile');
    assert.equal(bedrockModelTarget({ name: 'jp', region: 'ap-northeast-1' }, 'jp.anthropic.claude-sonnet-4-5-20250929-v1:0').kind, 'inference-profile');
    assert.equal(bedrockModelTarget({ name: 'jp', region: 'ap-northeast-1' }, 'apac.anthropic.claude-sonnet-4-5-20250929-v1:0').kind, 'inference-profile');
    assert.throws(() => bedrockModelTarget(us, 'eu.amazon.nova-pro-v1:0'), /geography "eu", but the lane's region us-east-1 is in "us"/);
    assert.throws(() => bedrockModelTarget({ name: 'gov', region: 'us-gov-west-1' }, 'us.amazon.nova-pro-v1:0'), /is in "us-gov"/);
    assert.throws(() => bedrockModelTarget(eu, 'global.anthropic.claude-sonnet-4-5-20250929-v1:0'), /global inference profile/);
    assert.throws(() => bedrockModelTarget(us, 'arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0'), /is an ARN/);
  });

  it('refuses to deploy a Vertex AI lane: the stack gives the function no Google credentials', () => {
    // Prepare
    const lane = resolveLanes({
      us: { provider: { kind: 'gemini', model: 'gemini-2.5-flash', vertex: { project: 'ratelane-prod', location: 'us-central1' } } },
    }).us!;
    // Act
    const problems = deploymentProblems(lane);
    // Assess
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^lane us: provider kind gemini with vertex cannot be deployed: .* use the Gemini API with API keys \(drop provider\.vertex\)/);
  });

  it("merges fairness over the defaults, and refuses to deploy a lane whose config outgrows its functions' environment", () => {
    // Prepare: a tenant weight, and then 60 of them (long ARNs)
    const weighted = resolveLanes({ us: { fairness: { tenantWeights: { 'arn:aws:iam::111122223333:role/payroll': 3 } } } }).us!;
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`arn:aws:iam::111122223333:role/tenant-with-a-long-name-${i}`, 2]));
    const crowded = resolveLanes({ us: { fairness: { tenantWeights: many } } }).us!;
    // Act
    const problems = deploymentProblems(crowded);
    // Assess
    assert.deepEqual(weighted.fairness, {
      classWeights: { urgent: 9, bulk: 1 },
      defaultTenantWeight: 1,
      tenantWeights: { 'arn:aws:iam::111122223333:role/payroll': 3 },
    });
    assert.deepEqual(deploymentProblems(weighted), []);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^lane us: its config is \d+ bytes as JSON, over the 3072 its functions' environment can hold/);
  });

  it('names the bucket after the account in AWS, keeps the config name locally and an explicit name everywhere', () => {
    // Prepare
    const lanes = resolveLanes();
    const named = resolveLanes({ us: { resources: { bucketName: 'acme-ratelane-documents' } } }).us!;
    // Act
    const deployed = laneInAccount(lanes.eu!, '123456789012');
    // Assess
    assert.equal(deployed.resources.bucketName, 'ratelane-eu-source-123456789012-eu-central-1');
    assert.deepEqual({ ...deployed.resources, bucketName: undefined }, { ...lanes.eu!.resources, bucketName: undefined }, 'only the bucket changes');
    assert.equal(lanes.eu?.resources.bucketName, 'ratelane-eu-source-eu-central-1', 'the local stack and tests keep the config name');
    assert.equal(laneInAccount(named, '123456789012').resources.bucketName, 'acme-ratelane-documents');
    assert.ok(deployed.resources.bucketName.length <= 63);
  });
});
