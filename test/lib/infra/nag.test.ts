/**
 * cdk-nag (AwsSolutions) over the lane app: zero unacknowledged findings, every acknowledgement on
 * purpose and with a real reason, and the check really runs inside `cdk synth`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { App, type Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { buildLaneApp } from '../../../lib/infra/app.js';
import { LANE_APP_CONTEXT } from './support.js';

/** Every acknowledgement recorded in the tree: construct path, rule id, reason. */
function acknowledgements(root: IConstruct): Array<{ path: string; id: string; reason: string }> {
  return root.node
    .findAll()
    .flatMap((c) =>
      c.node.metadata
        .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((m) =>
          Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ path: c.node.path, id: id.replace(/^annotation::/i, ''), reason })),
        ),
    );
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in either lane stack', () => {
    // Prepare
    const app = new App({ context: LANE_APP_CONTEXT });
    buildLaneApp(app);
    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    assert.deepEqual(
      report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
      [],
    );
    assert.equal(report.success, true);
  });

  it('also passes with a concrete account and other regions from context', () => {
    // Prepare
    const app = new App({ context: { ...LANE_APP_CONTEXT, account: '123456789012', usRegion: 'us-west-2', euRegion: 'eu-west-1' } });
    buildLaneApp(app);
    // Act
    const report = new AwsSolutionsChecks(app).validateScope(app);
    // Assess
    assert.deepEqual(
      report.violations.map((v) => v.ruleName),
      [],
    );
  });

  it('acknowledges only these findings, each with a real reason', () => {
    // Prepare
    const app = new App({ context: LANE_APP_CONTEXT });
    buildLaneApp(app);
    // Act
    const acks = acknowledgements(app);
    // Assess
    const expected = (lane: string, region: string) => [
      `ratelane-${lane}/Default/Storage/AccessLogs AwsSolutions-S1`,
      `ratelane-${lane}/Default/Storage/ProviderKeys AwsSolutions-SMG4`,
      `ratelane-${lane}/Default/Consumer/Role AwsSolutions-IAM5[Resource::<StorageSource42D3DA3E.Arn>/documents/*]`,
      `ratelane-${lane}/Default/Live/Role AwsSolutions-IAM5[Resource::<StorageSource42D3DA3E.Arn>/documents/*]`,
      `ratelane-${lane}/Default/Batch/Role AwsSolutions-IAM5[Resource::<StorageSource42D3DA3E.Arn>/documents/*]`,
      `ratelane-${lane}/Default/Consumer/PausePolicy AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:${region}:<AWS::AccountId>:schedule/ratelane-${lane}-pause/*]`,
      // Active tracing's X-Ray trace writes, which take no resource (lib/infra/lane-function.ts)
      ...['Consumer', 'Live', 'Batch'].map((fn) => `ratelane-${lane}/Default/${fn}/Role AwsSolutions-IAM5[Resource::*]`),
    ];
    assert.deepEqual(acks.map((a) => `${a.path} ${a.id}`).sort(), [...expected('us', 'us-east-1'), ...expected('eu', 'eu-central-1')].sort());
    for (const a of acks) {
      assert.ok(a.reason.length >= 80, `${a.id} at ${a.path} has a reason that explains itself: "${a.reason}"`);
      assert.doesNotMatch(a.reason, /\b(todo|fixme|n\/a|not needed|ignore)\b/i);
    }
  });

  it('runs inside synth: an unencrypted queue added to a lane stack fails the synth', () => {
    // Prepare
    const outdir = mkdtempSync(join(tmpdir(), 'ratelane-nag-'));
    const app = new App({ outdir, context: LANE_APP_CONTEXT });
    const stacks = buildLaneApp(app);
    new Queue(stacks.us as Stack, 'Careless', { encryption: undefined, enforceSSL: false });
    // Only cdk-nag matters here: skip CDK's built-in template validation, and keep the expected
    // failure report off the test output.
    const savedValidation = process.env.CDK_VALIDATION;
    const savedError = console.error;
    const savedLog = console.log;
    process.env.CDK_VALIDATION = 'false';
    console.error = () => undefined;
    console.log = () => undefined;
    try {
      // Act
      try {
        assert.throws(() => app.synth(), /Validation failed/);
      } finally {
        console.error = savedError;
        console.log = savedLog;
        if (savedValidation === undefined) delete process.env.CDK_VALIDATION;
        else process.env.CDK_VALIDATION = savedValidation;
      }
      // Assess
      const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as {
        pluginReports: Array<{
          pluginName: string;
          violations: Array<{ ruleName: string; violatingResources: Array<{ constructPath?: string; resourceLogicalId?: string }> }>;
        }>;
      };
      const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions');
      assert.ok(nag, `an AwsSolutions report in ${JSON.stringify(report.pluginReports.map((r) => r.pluginName))}`);
      const rules = nag.violations.map((v) => v.ruleName).sort();
      assert.ok(rules.includes('AwsSolutions-SQS3'), rules.join());
      assert.ok(rules.includes('AwsSolutions-SQS4'), rules.join());
      assert.ok(JSON.stringify(nag.violations).includes('Careless'));
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});
