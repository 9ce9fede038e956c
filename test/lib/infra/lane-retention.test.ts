/**
 * Retention is lane policy: one `retention` section per lane, applied by the stack as S3 lifecycle rules
 * (documents, batch files, access logs), DynamoDB TTL (results, ledger, batch manifest, each store writing
 * `expiresAt`) and log group retention, read here off the synthesized template.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveLane } from '../../../lib/config/lanes.js';
import { manifestTableName } from '../../../lib/store/manifest-model.js';
import { synthLane } from './support.js';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

/** The resources of a template of one type, by logical id. */
function resourcesOf(json: Record<string, unknown>, type: string): Array<[string, Resource]> {
  return Object.entries(json.Resources as Record<string, Resource>).filter(([, r]) => r.Type === type);
}

describe('lane stack: retention is the lane config', () => {
  it("applies every retention of the lane's config: lifecycle rules, table TTLs and log groups", () => {
    // Prepare: a lane whose retentions all differ from the defaults and from each other
    const retention = { documentsDays: 40, resultsDays: 730, ledgerDays: 60, batchArtifactsDays: 21, logsDays: 14, accessLogsDays: 180 } as const;

    // Act
    const { json, stack } = synthLane('eu', { retention });

    // Assess: the bucket's rules
    const buckets = resourcesOf(json, 'AWS::S3::Bucket');
    const source = buckets.find(([, b]) => b.Properties.BucketName === stack.lane.resources.bucketName)?.[1];
    const logs = buckets.find(([, b]) => b.Properties.BucketName === undefined)?.[1];
    const rules = (b: Resource | undefined) =>
      ((b?.Properties.LifecycleConfiguration ?? { Rules: [] }) as { Rules: Array<{ Id: string; Prefix?: string; ExpirationInDays?: number }> }).Rules.filter(
        (r) => r.ExpirationInDays !== undefined,
      ).map((r) => [r.Id, r.Prefix, r.ExpirationInDays]);
    assert.deepEqual(rules(source), [
      ['expire-documents', 'documents/', 40],
      ['expire-batch-artifacts', 'batch/', 21],
    ]);
    assert.deepEqual(rules(logs), [['expire-access-logs', undefined, 180]]);
    // the tables' TTL: results, ledger, the batch manifest (the stores write `expiresAt` from the same config)
    const ttl = Object.fromEntries(
      resourcesOf(json, 'AWS::DynamoDB::GlobalTable').map(([, t]) => [t.Properties.TableName, t.Properties.TimeToLiveSpecification]),
    );
    const on = { AttributeName: 'expiresAt', Enabled: true };
    assert.deepEqual(ttl[stack.lane.resources.resultsTable], on);
    assert.deepEqual(ttl[stack.lane.resources.ledgerTable], on);
    assert.deepEqual(ttl[manifestTableName(stack.lane)], on);
    // every log group of the lane's functions and API
    const groups = resourcesOf(json, 'AWS::Logs::LogGroup');
    assert.ok(groups.length >= 4, `found ${groups.length} log groups`);
    for (const [id, group] of groups) assert.equal(group.Properties.RetentionInDays, 14, id);
  });

  it('refuses a retention shorter than a job may wait, and a log retention CloudWatch does not offer', () => {
    // Act + Assess
    assert.throws(() => resolveLane({ name: 'eu', region: 'eu-central-1', retention: { documentsDays: 7 } }), /job horizon[\s\S]*retention\.documentsDays/);
    assert.throws(() => resolveLane({ name: 'eu', region: 'eu-central-1', retention: { ledgerDays: 30 } }), /retention\.ledgerDays/);
    assert.throws(() => resolveLane({ name: 'eu', region: 'eu-central-1', retention: { logsDays: 31 } }), /retention\.logsDays/);
    assert.equal(resolveLane({ name: 'eu', region: 'eu-central-1', retention: { logsDays: 60 } }).retention.logsDays, 60);
  });
});
