/**
 * The residency map from small hand-made templates: each place's region, encryption and retention as
 * the template sets them (or the service's default, named as such), the model endpoint and the batch
 * files from the lane config the stack hands its functions, the review path, and the flags: a replica
 * in another geography, a stack without a region, a US endpoint on the EU lane, a synth refusal. Also
 * the cloud assembly reader, the text table and the escaping of the HTML page.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DEFAULT_LANES, type LaneConfig, resolveLanes } from '../../../lib/config/lanes.js';
import { readCloudAssembly } from '../../../lib/residency/cdk-out.js';
import { formatResidency, summaryLine } from '../../../lib/residency/format.js';
import { renderResidencyHtml } from '../../../lib/residency/html.js';
import { type LaneSource, residencyMap } from '../../../lib/residency/map.js';
import type { ResidencyPlace } from '../../../lib/residency/model.js';
import type { CfnTemplate, StackTemplate } from '../../../lib/residency/template.js';

const EU = DEFAULT_LANES.eu!;
const US_HOST = 'https://api.openai.com/v1';

/** A lane stack's template, as small as the map needs: the lane's resources, one function carrying the lane config. */
function laneTemplate(lane: LaneConfig, extra: CfnTemplate['Resources'] = {}): CfnTemplate {
  // As the stack writes it: the bucket name carries the account, which CloudFormation fills in.
  const [before, after] = JSON.stringify(lane).split(lane.resources.bucketName);
  const config = { 'Fn::Join': ['', [`${before}ratelane-${lane.name}-source-`, { Ref: 'AWS::AccountId' }, `-${lane.region}${after}`]] };
  return {
    Resources: {
      Logs: {
        Type: 'AWS::S3::Bucket',
        DeletionPolicy: 'Retain',
        Properties: { LifecycleConfiguration: { Rules: [{ ExpirationInDays: 365, Status: 'Enabled' }] } },
      },
      Source: {
        Type: 'AWS::S3::Bucket',
        DeletionPolicy: 'Retain',
        Properties: {
          BucketName: { 'Fn::Join': ['', ['ratelane-eu-source-', { Ref: 'AWS::AccountId' }, '-eu-central-1']] },
          BucketEncryption: {
            ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: { Ref: 'Key' } } }],
          },
          LoggingConfiguration: { DestinationBucketName: { Ref: 'Logs' } },
          LifecycleConfiguration: {
            Rules: [
              { Id: 'docs', Prefix: 'documents/', ExpirationInDays: 30, Status: 'Enabled' },
              { Id: 'off', ExpirationInDays: 1, Status: 'Disabled' },
              { AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' },
            ],
          },
        },
      },
      Dlq: { Type: 'AWS::SQS::Queue', Properties: { QueueName: lane.resources.dlqName, SqsManagedSseEnabled: true, MessageRetentionPeriod: 1_209_600 } },
      Jobs: {
        Type: 'AWS::SQS::Queue',
        Properties: { QueueName: lane.resources.queueName, RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': ['Dlq', 'Arn'] }, maxReceiveCount: 5 } },
      },
      Ledger: {
        Type: 'AWS::DynamoDB::GlobalTable',
        Properties: {
          TableName: lane.resources.ledgerTable,
          SSESpecification: { SSEEnabled: true, SSEType: 'KMS' },
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          Replicas: [{ Region: lane.region, PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true, RecoveryPeriodInDays: 7 } }],
        },
      },
      Results: { Type: 'AWS::DynamoDB::Table', Properties: { TableName: lane.resources.resultsTable } },
      ConsumerLogs: { Type: 'AWS::Logs::LogGroup', Properties: { RetentionInDays: 14 } },
      Consumer: {
        Type: 'AWS::Lambda::Function',
        Properties: {
          FunctionName: `ratelane-${lane.name}-consumer`,
          LoggingConfig: { LogGroup: { Ref: 'ConsumerLogs' } },
          Environment: { Variables: { RATELANE_LANE_CONFIG: config, POWERTOOLS_METRICS_NAMESPACE: 'ratelane' } },
        },
      },
      Helper: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'helper' } },
      ...extra,
    },
  };
}

/** A lane's source from its template. */
function fromTemplate(lane: LaneConfig, template: CfnTemplate): LaneSource {
  const stack: StackTemplate = { stackName: `ratelane-${lane.name}`, lane: lane.name, region: lane.region, template };
  return { name: lane.name, configured: lane, stack, origin: 'cdk-out' };
}

/** The place of a kind whose name starts with `name`. */
function place(places: readonly ResidencyPlace[], kind: string, name = ''): ResidencyPlace {
  const found = places.find((p) => p.kind === kind && p.name.startsWith(name));
  assert.ok(found, `a ${kind} place ${name}: ${places.map((p) => `${p.kind} ${p.name}`).join(', ')}`);
  return found;
}

describe('residencyMap: the places of a template', () => {
  it('lists each place with its region, encryption and retention as the template sets them, and the defaults where it sets none', () => {
    // Act
    const [lane] = residencyMap([fromTemplate(EU, laneTemplate(EU))]).lanes;
    // Assess
    assert.ok(lane);
    assert.deepEqual(
      [lane.lane, lane.region, lane.geography, lane.stack, lane.source, lane.synthRefusal],
      ['eu', 'eu-central-1', 'eu', 'ratelane-eu', 'cdk-out', null],
    );
    const source = place(lane.places, 'bucket', 'ratelane-eu-source-');
    assert.equal(source.name, `ratelane-eu-source-\${AWS::AccountId}-eu-central-1`);
    assert.equal(source.encryption, `SSE-KMS (key \${Key})`);
    assert.equal(
      source.retention,
      'documents/: expire after 30 d; incomplete uploads aborted after 1 d; other objects: kept until deleted; kept when the stack is deleted (DeletionPolicy Retain)',
    );
    const logs = place(lane.places, 'bucket', '(generated name of Logs)');
    assert.match(logs.holds, /^S3 server access logs of ratelane-eu-source-/);
    assert.match(logs.encryption, /^not set in the template \(S3 encrypts new objects with SSE-S3 by default\)/);
    assert.match(logs.retention, /^every object: expire after 365 d/);
    assert.deepEqual(
      [place(lane.places, 'queue').name, place(lane.places, 'queue').encryption, place(lane.places, 'queue').retention],
      [
        'ratelane-eu-jobs',
        'not set in the template (SQS applies SSE-SQS to new queues by default)',
        'messages kept up to 4 d (SQS default: no MessageRetentionPeriod)',
      ],
    );
    const dlq = place(lane.places, 'dead-letter-queue');
    assert.deepEqual(
      [dlq.name, dlq.encryption, dlq.retention],
      ['ratelane-eu-jobs-dlq', 'SSE-SQS (SQS-managed keys)', 'messages kept up to 14 d (MessageRetentionPeriod 1209600 s)'],
    );
    const ledger = place(lane.places, 'table', 'ratelane-eu-ledger');
    assert.deepEqual(
      [ledger.encryption, ledger.retention],
      ['SSE-KMS (AWS managed key aws/dynamodb)', 'items expire by TTL on expiresAt, 90 d after each entry (retention.ledgerDays)'],
    );
    assert.equal(place(lane.places, 'table-backups', 'ratelane-eu-ledger').retention, 'restorable for 7 d (PITR RecoveryPeriodInDays)');
    const results = place(lane.places, 'table', 'ratelane-eu-results');
    assert.deepEqual([results.encryption, results.retention], ['AWS owned key (DynamoDB default)', 'no TTL: items kept until deleted']);
    assert.ok(!lane.places.some((p) => p.kind === 'table-backups' && p.name.startsWith('ratelane-eu-results')), 'no PITR, no backups');
    const consumerLogs = place(lane.places, 'log-group', 'logs of ratelane-eu-consumer');
    assert.deepEqual([consumerLogs.logicalId, consumerLogs.retention], ['ConsumerLogs', '14 d (RetentionInDays)']);
    assert.match(place(lane.places, 'log-group', '/aws/lambda/helper').retention, /^never expire \(Lambda's default log group/);
    const metrics = place(lane.places, 'metrics');
    assert.equal(metrics.name, 'CloudWatch metrics (namespace ratelane)');
    assert.match(metrics.holds, /no document text/);
    assert.ok(
      lane.places.every((p) => p.region === (p.kind === 'model-endpoint' || p.kind === 'batch-files' ? null : 'eu-central-1')),
      'every AWS place in the stack region',
    );
    assert.deepEqual(lane.flagged, []);
  });

  it('draws the model endpoint, the batch files and the review path from the lane config the stack hands its functions', () => {
    // Act
    const [lane] = residencyMap([fromTemplate(EU, laneTemplate(EU))]).lanes;
    // Assess
    assert.ok(lane);
    const endpoint = place(lane.places, 'model-endpoint');
    assert.deepEqual(
      [endpoint.name, endpoint.geography, endpoint.inLaneGeography, endpoint.encryption],
      ['eu.api.openai.com', 'eu', true, 'TLS in transit (HTTPS)'],
    );
    const batch = place(lane.places, 'batch-files');
    assert.deepEqual([batch.name, batch.geography, batch.inLaneGeography], ['eu.api.openai.com: Files and Batch API', 'eu', true]);
    // The lane keeps batch artifacts 90 d; OpenAI keeps a file 30 d at most.
    assert.match(batch.retention, /^30 d after each file's creation \(retention\.batchArtifactsDays/);
    const review = place(lane.places, 'review');
    assert.equal(review.name, 'ratelane review: ratelane-eu-ledger and ratelane-eu-results, via DynamoDB in eu-central-1');
    assert.deepEqual(
      [review.region, review.logicalId, review.retention],
      ['eu-central-1', 'Ledger', 'items expire by TTL on expiresAt, 90 d after each entry (retention.ledgerDays)'],
    );
  });

  it('puts a Bedrock lane batch files under its bucket batch/ prefix, with the lifecycle rules that reach it', () => {
    // Prepare
    const bedrock = resolveLanes({ eu: { provider: { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' } } }).eu!;
    // Act
    const [lane] = residencyMap([fromTemplate(bedrock, laneTemplate(bedrock))]).lanes;
    // Assess
    assert.ok(lane);
    assert.deepEqual(
      [place(lane.places, 'model-endpoint').name, place(lane.places, 'model-endpoint').region],
      ['bedrock-runtime.eu-central-1.amazonaws.com', 'eu-central-1'],
    );
    const batch = place(lane.places, 'batch-files');
    assert.equal(batch.name, `s3://ratelane-eu-source-\${AWS::AccountId}-eu-central-1/batch/ (input/, output/)`);
    assert.equal(batch.retention, 'no expiration rule for batch/: kept until deleted; incomplete uploads aborted after 1 d');
    assert.equal(batch.encryption, `SSE-KMS (key \${Key})`);
    assert.deepEqual(lane.flagged, []);
  });
});

describe('residencyMap: what is flagged', () => {
  it('flags a table replica in another geography and, in a stack without a region, every place it cannot place', () => {
    // Prepare
    const replicated = laneTemplate(EU, {
      Copy: {
        Type: 'AWS::DynamoDB::GlobalTable',
        Properties: {
          TableName: 'copy',
          Replicas: [{ Region: { Ref: 'AWS::Region' } }, { Region: 'us-east-1', PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }],
        },
      },
    });
    // Act
    const [lane] = residencyMap([fromTemplate(EU, replicated)]).lanes;
    const placed = fromTemplate(EU, laneTemplate(EU));
    const [agnostic] = residencyMap([{ ...placed, stack: { ...placed.stack!, region: undefined } }]).lanes;
    // Assess
    assert.deepEqual(
      lane?.flagged.map((f) => [f.kind, f.name]),
      [
        ['table', 'copy (replica in us-east-1)'],
        ['table-backups', 'copy (replica in us-east-1): point-in-time backups'],
      ],
    );
    assert.match(lane!.flagged[0]!.why, /its region us-east-1 is in geography us, outside the lane's geography eu/);
    assert.equal(place(lane!.places, 'table', 'copy (replica in eu-central-1)').inLaneGeography, true, 'Ref AWS::Region is the stack region');
    assert.ok(agnostic);
    // The ledger's replica names its region; everything else is in the stack's.
    assert.deepEqual([...new Set(agnostic.flagged.map((f) => f.kind))], ['bucket', 'queue', 'dead-letter-queue', 'table', 'log-group', 'metrics']);
    assert.equal(place(agnostic.places, 'table', 'ratelane-eu-ledger').inLaneGeography, true);
    assert.match(agnostic.flagged[0]!.why, /its region cannot be determined/);
    assert.equal(place(agnostic.places, 'model-endpoint').inLaneGeography, true, 'the endpoint is placed by the lane config');
  });

  it('draws a lane the synth refused from its config, and flags its US endpoint with the refusal', () => {
    // Prepare
    const moved = resolveLanes({ eu: { provider: { baseUrl: US_HOST } } }).eu!;
    const refusal = 'lane eu cannot be deployed:\n- its model endpoint api.openai.com processes in us';
    // Act
    const [lane] = residencyMap([{ name: 'eu', configured: moved, stack: undefined, origin: 'synth', synthRefusal: refusal }]).lanes;
    // Assess
    assert.ok(lane);
    assert.deepEqual([lane.source, lane.stack, lane.synthRefusal], ['config', null, refusal]);
    assert.equal(place(lane.places, 'bucket').name, `ratelane-eu-source-\${AWS::AccountId}-eu-central-1`);
    assert.equal(place(lane.places, 'queue').retention, 'unknown: the lane was not synthesized');
    const endpoint = place(lane.places, 'model-endpoint');
    assert.deepEqual([endpoint.name, endpoint.geography, endpoint.inLaneGeography], ['api.openai.com', 'us', false]);
    assert.deepEqual(
      lane.flagged.map((f) => [f.kind, f.name]),
      [
        ['model-endpoint', 'api.openai.com'],
        ['batch-files', 'api.openai.com: Files and Batch API'],
      ],
    );
    assert.match(lane.flagged[0]!.why, /^lane eu \(eu-central-1, geography eu\): its model endpoint api\.openai\.com processes in us/);
    assert.ok(lane.flagged[0]!.why.endsWith(`; cdk synth refuses the lane: ${refusal}`), lane.flagged[0]!.why);
    assert.match(lane.flagged[1]!.why, /^the batch files go to the model endpoint: lane eu/);
  });

  it('flags the stack itself when the synth refuses a lane for another reason', () => {
    // Act
    const [lane] = residencyMap([{ name: 'eu', configured: EU, stack: undefined, origin: 'synth', synthRefusal: 'consumer.timeoutSeconds too short' }]).lanes;
    // Assess
    assert.deepEqual(lane?.flagged, [{ kind: 'stack', name: 'ratelane-eu', why: 'cdk synth refuses the lane: consumer.timeoutSeconds too short' }]);
  });
});

describe('reading a cloud assembly', () => {
  it('reads each stack of the manifest with its lane tag, region and template, and nested assemblies', () => {
    // Prepare
    const dir = mkdtempSync(join(tmpdir(), 'ratelane-residency-test-'));
    try {
      writeFileSync(join(dir, 'eu.template.json'), JSON.stringify(laneTemplate(EU)));
      writeFileSync(join(dir, 'other.template.json'), JSON.stringify({ Resources: {} }));
      const stack = (file: string, environment: string, tags?: Record<string, string>) => ({
        type: 'aws:cloudformation:stack',
        environment,
        properties: { templateFile: file, ...(tags ? { tags } : {}) },
      });
      writeFileSync(
        join(dir, 'manifest.json'),
        JSON.stringify({
          artifacts: {
            'ratelane-eu': stack('eu.template.json', 'aws://unknown-account/eu-central-1', { 'ratelane:lane': 'eu' }),
            other: stack('other.template.json', 'aws://unknown-account/unknown-region'),
            Tree: { type: 'cdk:tree' },
          },
        }),
      );
      // Act
      const stacks = readCloudAssembly(dir);
      // Assess
      assert.deepEqual(
        stacks.map((s) => [s.stackName, s.lane, s.region]),
        [
          ['ratelane-eu', 'eu', 'eu-central-1'],
          ['other', undefined, undefined],
        ],
      );
      assert.throws(() => readCloudAssembly(join(dir, 'missing')), /^ResidencyInputError: .*manifest\.json: no such file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the map as text and as a page', () => {
  it('prints a table per lane, the flagged places and one summary line', () => {
    // Prepare
    const moved = resolveLanes({ eu: { provider: { baseUrl: US_HOST } } }).eu!;
    const map = residencyMap([
      fromTemplate(EU, laneTemplate(EU)),
      { name: 'eu', configured: moved, stack: undefined, origin: 'synth', synthRefusal: 'refused' },
    ]);
    // Act
    const text = formatResidency(map);
    // Assess
    assert.match(
      text,
      /^lane eu: eu-central-1, geography eu \(stack ratelane-eu, from cdk\.out\)\n {2}KIND +NAME +LOGICAL ID +REGION +GEO +IN LANE +ENCRYPTION +RETENTION\n/,
    );
    assert.match(text, /\n {2}flagged: none\n/);
    assert.match(text, /\n {2}FLAGGED model-endpoint api\.openai\.com: lane eu/);
    assert.match(text, /\n {2}model-endpoint +api\.openai\.com +- +- +us +NO /);
    assert.ok(text.endsWith(`${summaryLine(map)}\n`));
    assert.match(summaryLine(map), /^residency: 2 lane\(s\), \d+ place\(s\), 2 flagged \(eu 0, eu 2\); the synth refused eu$/);
  });

  it('escapes every string of the map in the page and embeds the map as JSON that cannot close its element', () => {
    // Prepare
    const hostile = '</script><img src=x onerror=alert(1)>';
    const map = residencyMap([fromTemplate(EU, laneTemplate(EU, { Evil: { Type: 'AWS::SQS::Queue', Properties: { QueueName: hostile } } }))]);
    // Act
    const page = renderResidencyHtml(map);
    // Assess
    assert.ok(!page.includes('<img'), 'no img element');
    assert.ok(page.includes('&#60;/script&#62;&#60;img src=x onerror=alert(1)&#62;'), 'shown as text');
    assert.match(page, /Content-Security-Policy" content="default-src &#39;none&#39;/);
    assert.ok(!/<script(?![^>]*type="application\/json")/.test(page), 'no executable script');
    const data = /<script type="application\/json" id="residency-data">(.*?)<\/script>/s.exec(page)?.[1];
    assert.deepEqual(JSON.parse(data!), map);
  });
});
