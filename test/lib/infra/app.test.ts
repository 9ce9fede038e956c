/**
 * bin/app.ts's wiring: one stack per lane, regions and account from CDK context, refusal of bad
 * context, and lane integrity when lanes move to other regions. Constructs are also tried alone
 * in a bare Stack.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { App, Stack, Token } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_LANES, LaneConfigError, resolveLanes } from '../../../lib/config/lanes.js';
import { AppContextError, buildLaneApp, lanesFromContext } from '../../../lib/infra/app.js';
import { LaneRegionError, LaneStack } from '../../../lib/infra/lane-stack.js';
import { LaneQueueSettingsError, LaneQueues } from '../../../lib/infra/queues.js';
import { EMAIL_ALARMS, LANE_APP_CONTEXT } from './support.js';

describe('lane app', () => {
  it('builds one stack per lane, in the default regions, account-agnostic without context', () => {
    // Prepare
    const app = new App({ context: LANE_APP_CONTEXT });
    // Act
    const stacks = buildLaneApp(app);
    // Assess
    assert.deepEqual(
      Object.values(stacks).map((s) => [s.stackName, s.region, s.lane.name]),
      [
        ['ratelane-us', 'us-east-1', 'us'],
        ['ratelane-eu', 'eu-central-1', 'eu'],
      ],
    );
    for (const s of Object.values(stacks)) assert.ok(Token.isUnresolved(s.account));
  });

  it('takes regions and account from context, naming buckets after lane, account and region', () => {
    // Prepare
    const app = new App({ context: { ...LANE_APP_CONTEXT, usRegion: 'us-west-2', euRegion: 'eu-west-1', account: '123456789012' } });
    // Act
    const stacks = buildLaneApp(app);
    // Assess
    assert.equal(stacks.us?.region, 'us-west-2');
    assert.equal(stacks.eu?.region, 'eu-west-1');
    assert.equal(stacks.us?.account, '123456789012');
    assert.equal(stacks.us?.lane.resources.bucketName, 'ratelane-us-source-123456789012-us-west-2');
    assert.equal(stacks.eu?.lane.resources.bucketName, 'ratelane-eu-source-123456789012-eu-west-1');
  });

  it('gives two accounts different bucket names for the same lane, and an account-agnostic synth the deploy account', () => {
    // Prepare
    const bucketOf = (context: Record<string, unknown>) => {
      const stack = buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, ...context } })).us;
      assert.ok(stack);
      const bucket = Object.values<any>(Template.fromStack(stack).findResources('AWS::S3::Bucket')).find((b) => b.Properties.BucketName);
      return bucket.Properties.BucketName as unknown;
    };
    // Act
    const staging = bucketOf({ account: '111111111111' });
    const production = bucketOf({ account: '222222222222' });
    const agnostic = bucketOf({});
    // Assess
    assert.equal(staging, 'ratelane-us-source-111111111111-us-east-1');
    assert.equal(production, 'ratelane-us-source-222222222222-us-east-1');
    assert.deepEqual(agnostic, { 'Fn::Join': ['', ['ratelane-us-source-', { Ref: 'AWS::AccountId' }, '-us-east-1']] });
  });

  it('keeps moved lanes apart: each template names only its own region and resources', () => {
    // Prepare
    const app = new App({ context: { ...LANE_APP_CONTEXT, usRegion: 'us-west-2', euRegion: 'eu-west-1' } });
    const stacks = buildLaneApp(app);
    const lanes = Object.values(stacks).map((s) => s.lane);
    for (const stack of Object.values(stacks)) {
      const other = lanes.find((l) => l.name !== stack.lane.name);
      assert.ok(other);
      // Act
      const text = JSON.stringify(Template.fromStack(stack).toJSON());
      // Assess
      const regions = new Set(text.match(/\b(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-[a-z]+-\d\b/g) ?? []);
      assert.deepEqual([...regions], [stack.lane.region]);
      for (const needle of [other.region, `ratelane-${other.name}`, ...Object.values(other.resources)]) assert.ok(!text.includes(needle), needle);
    }
  });

  it("takes a lane's live readers from context (<lane>LiveReaders, comma-separated ARNs) and refuses one that is no principal ARN", () => {
    // Act
    const lanes = lanesFromContext(
      new App({ context: { usLiveReaders: 'arn:aws:iam::123456789012:role/ops-readers, arn:aws:iam::123456789012:user/support' } }),
    );

    // Assess
    assert.deepEqual(lanes.us!.live.readers, ['arn:aws:iam::123456789012:role/ops-readers', 'arn:aws:iam::123456789012:user/support']);
    assert.equal(lanes.eu!.live.readers, undefined);
    assert.throws(() => lanesFromContext(new App({ context: { usLiveReaders: 'ops-team' } })), LaneConfigError);
  });

  it("takes a lane's producers from context as JSON (-c string or cdk.json value) and names a malformed one", () => {
    // Prepare
    const grant = { senderId: 'AROAPRODUCERA00000001', tenants: ['team-a'] };
    // Act
    const fromFlag = lanesFromContext(new App({ context: { usProducers: JSON.stringify([grant]) } }));
    const fromFile = lanesFromContext(new App({ context: { euProducers: [grant] } }));
    // Assess
    assert.deepEqual(fromFlag.us!.producers, [grant]);
    assert.equal(fromFlag.eu!.producers, undefined);
    assert.deepEqual(fromFile.eu!.producers, [grant]);
    assert.throws(() => lanesFromContext(new App({ context: { usProducers: '[{senderId:' } })), /context usProducers must be JSON/);
    assert.throws(() => lanesFromContext(new App({ context: { usProducers: [{ senderId: 'svc-a', tenants: ['x'] }] } })), /producers\[0\]\.senderId/);
  });

  it('takes the lanes from the lane config file (-c config=<file>): a third lane is a third stack', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-app-'));
    const config = join(dir, 'lanes.json');
    writeFileSync(
      config,
      JSON.stringify({
        lanes: [
          { name: 'us', region: 'us-east-1' },
          { name: 'eu', region: 'eu-central-1' },
          { name: 'apac', region: 'ap-southeast-2', provider: { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' } },
        ],
      }),
    );
    try {
      // Act
      const stacks = buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, config } }));
      // Assess
      assert.deepEqual(Object.keys(stacks), ['us', 'eu', 'apac']);
      assert.equal(stacks.apac!.region, 'ap-southeast-2');
      assert.throws(() => buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, config: join(dir, 'none.json') } })), /none\.json: no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses at synth an EU lane whose model endpoint a context override moves to the US, naming the lane and the host', () => {
    // Act / Assess
    assert.throws(
      () => buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, euProviderBaseUrl: 'https://api.openai.com/v1' } })),
      (e: unknown) =>
        e instanceof LaneConfigError && /lane eu cannot be deployed/.test(e.message) && /model endpoint api\.openai\.com processes in us/.test(e.message),
    );
    const approved = buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, euProviderBaseUrl: 'https://eu.api.openai.com/v1' } }));
    assert.equal(approved.eu!.lane.provider.baseUrl, 'https://eu.api.openai.com/v1');
  });

  it('refuses malformed context', () => {
    // Act / Assess
    assert.throws(() => buildLaneApp(new App({ context: { ...LANE_APP_CONTEXT, account: 'prod' } })), AppContextError);
    assert.throws(() => lanesFromContext(new App({ context: { usRegion: 'eu-central-1' } })), LaneConfigError);
    assert.throws(() => lanesFromContext(new App({ context: { euRegion: 'Frankfurt' } })), LaneConfigError);
    assert.throws(() => lanesFromContext(new App({ context: { usRegion: 42 } })), AppContextError);
  });

  it('refuses to put a lane stack outside its lane region', () => {
    // Prepare
    const app = new App({ context: LANE_APP_CONTEXT });
    const lane = DEFAULT_LANES.eu;
    assert.ok(lane);
    // Act / Assess
    assert.throws(() => new LaneStack(app, 'Misplaced', { lane, env: { region: 'us-east-1' }, alarmDestination: EMAIL_ALARMS }), LaneRegionError);
  });
});

describe('LaneQueues in a bare stack', () => {
  it('renders queue settings from the lane config', () => {
    // Prepare
    const lane = resolveLanes({ us: { queue: { visibilityTimeoutSeconds: 900, maxReceiveCount: 8 }, consumer: { timeoutSeconds: 120 } } }).us;
    assert.ok(lane);
    const stack = new Stack();
    // Act
    new LaneQueues(stack, 'Queues', { lane });
    // Assess
    Template.fromStack(stack).hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'ratelane-us-jobs',
      VisibilityTimeout: 900,
      RedrivePolicy: { maxReceiveCount: 8 },
      SqsManagedSseEnabled: true,
    });
  });

  it('refuses a visibility timeout under 6x the consumer timeout even if handed an unvalidated lane', () => {
    // Prepare
    const base = DEFAULT_LANES.us;
    assert.ok(base);
    const lane = { ...base, queue: { ...base.queue, visibilityTimeoutSeconds: 5 * base.consumer.timeoutSeconds } };
    // Act / Assess
    assert.throws(() => new LaneQueues(new Stack(), 'Queues', { lane }), LaneQueueSettingsError);
  });
});
