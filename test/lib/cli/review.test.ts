/**
 * `ratelane review` on the run's DynamoDB Local: `list` (text with its summary line, `--json`), `resolve`
 * from a file (the reviewer given, else the STS caller in AWS, else the OS user), two `resolve` at once
 * (one commits, the other is told the job is already resolved), and bad input — an unknown lane, a file
 * that is not JSON or cannot be read, an object that fails validation, a job that does not exist or is
 * not in review — each with its exit code and nothing written.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { createReviewCommand, REVIEW_EXIT, type ReviewWiring } from '../../../lib/cli/review.js';
import { idempotencyKeyFor, sha256Hex } from '../../../lib/contract/job.js';
import { createAwsClients } from '../../../lib/platform/clients.js';
import type { Ledger } from '../../../lib/store/ledger.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { englishDocuments, trackedLanes, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueName } from '../../helpers/endpoints.js';

const newLane = trackedLanes();
const folder = mkdtempSync(join(tmpdir(), 'ratelane-review-'));
after(() => rmSync(folder, { recursive: true, force: true }));

/** An io that collects what the command writes. */
function capture(): { io: CommandIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} }, out: () => out, err: () => err };
}

/** Writes `content` to a file of the test's folder; returns its path. */
function file(content: string): string {
  const path = join(folder, `${uniqueName('corrected')}.json`);
  writeFileSync(path, content);
  return path;
}

/** A corpus invoice's correct extraction, as a JSON file. */
function correctFile(): string {
  return file(JSON.stringify(extractInvoice(englishDocuments(1)[0]!.text)));
}

/** What the pipeline leaves for a job whose answer stayed invalid: a claim, a failed validation, a review entry. */
async function jobInReview(ledger: Ledger): Promise<{ jobId: string; idempotencyKey: string }> {
  const jobId = uniqueName('job');
  const idempotencyKey = idempotencyKeyFor({
    sourceId: jobId,
    contentSha256: sha256Hex(jobId),
    promptVersion: 'invoice-extract@1',
    schemaVersion: 'invoice@1',
  });
  const base = { jobId, idempotencyKey, region: 'us', schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@1', attempt: 0, deferrals: 0 };
  await ledger.claimJob({ jobId, idempotencyKey, region: 'us' });
  await ledger.record({
    ...base,
    kind: 'validation_failed',
    reason: 'domain_invalid',
    parseStatus: 'domain_invalid',
    failingFields: ['total'],
    failingRules: ['total_sum'],
  });
  await ledger.record({ ...base, kind: 'needs_review', reason: 'domain_invalid', details: 'output still invalid after 1 of 1 repair attempt(s)' });
  return { jobId, idempotencyKey };
}

/** Runs `ratelane review …` on the test lane (as `us`); resolves the exit code and the output. */
async function review(t: TestLane, argv: string[], wiring: ReviewWiring = {}): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  const withEndpoints = wiring.dynamodbFor ? argv : [...argv, '--endpoints', JSON.stringify(testEndpoints())];
  const code = await runCommand(createReviewCommand({ lanes: { us: t.lane }, osUser: () => 'os-user', ...wiring }), withEndpoints, c.io);
  return { code, out: c.out(), err: c.err() };
}

describe('ratelane review', () => {
  it('lists the jobs in review with a summary line (and --json), resolves one from a file, and then lists none', async () => {
    // Prepare
    const t = await newLane();
    const { jobId, idempotencyKey } = await jobInReview(t.ledger);
    const path = correctFile();

    // Act
    const listed = await review(t, ['list', '--lane', 'us']);
    const listedJson = await review(t, ['list', '--lane', 'us', '--json']);
    const resolved = await review(t, ['resolve', jobId, '--lane', 'us', '--file', path, '--reviewer', 'bob']);
    const afterwards = await review(t, ['list', '--lane', 'us', '--json']);

    // Assess
    assert.equal(listed.code, REVIEW_EXIT.ok);
    assert.match(listed.out, new RegExp(`^  ${jobId}  since \\S+  domain_invalid$`, 'm'));
    assert.match(listed.out, new RegExp(`source hash \\(idempotency key\\) ${idempotencyKey}`));
    assert.match(listed.out, /failing fields: total\n {6}failing rules: total_sum/);
    assert.match(listed.out, /^lane us \(us-east-1\): 1 job\(s\) in needs_review \(1 looked at\)$/m);
    const json = JSON.parse(listedJson.out);
    assert.equal(json.ok, true);
    assert.equal(json.reviews.length, 1);
    assert.equal(json.reviews[0].jobId, jobId);
    assert.equal(json.reviews[0].schemaVersion, 'invoice@1');
    assert.equal(json.nextCursor, undefined, 'the whole ledger was read');
    assert.equal(resolved.code, REVIEW_EXIT.ok, resolved.err);
    assert.match(
      resolved.out,
      new RegExp(`^job ${jobId} resolved in lane us: committed at \\S+ \\(invoice@1\\), reviewer bob \\(given\\); the job is committed\\n$`),
    );
    assert.equal((await t.results.get(idempotencyKey))?.jobId, jobId);
    assert.deepEqual(JSON.parse(afterwards.out).reviews, []);
  });

  it('two resolve at once: one commits, the other says the job is already resolved (exit 3)', async () => {
    // Prepare
    const t = await newLane();
    const { jobId } = await jobInReview(t.ledger);
    const path = correctFile();

    // Act
    const [a, b] = await Promise.all([
      review(t, ['resolve', jobId, '--lane', 'us', '--file', path, '--reviewer', 'a']),
      review(t, ['resolve', jobId, '--lane', 'us', '--file', path, '--reviewer', 'b', '--json']),
    ]);
    const again = await review(t, ['resolve', jobId, '--lane', 'us', '--file', path, '--json']);

    // Assess
    assert.deepEqual([a.code, b.code].sort(), [REVIEW_EXIT.ok, REVIEW_EXIT.refused]);
    const loser = a.code === REVIEW_EXIT.ok ? JSON.parse(b.out).error : { code: 'already_committed', message: a.err };
    assert.equal(loser.code, 'already_committed');
    assert.match(loser.message, new RegExp(`job ${jobId} is already resolved`));
    assert.equal((await t.ledger.entriesFor(jobId)).filter((e) => e.kind === 'committed').length, 1);
    assert.equal(again.code, REVIEW_EXIT.refused);
    assert.deepEqual(JSON.parse(again.out).error.state, 'committed');
  });

  it('the reviewer: --reviewer, else the STS caller in AWS, else (locally) the OS user', async () => {
    // Prepare: "AWS" is the local DynamoDB given as the lane's client, without --endpoints
    const t = await newLane();
    const [inAws, local] = [await jobInReview(t.ledger), await jobInReview(t.ledger)];
    const asked: string[] = [];
    const aws: ReviewWiring = {
      dynamodbFor: (region) => createAwsClients(region, testEndpoints()),
      callerArn: async (region) => {
        asked.push(region);
        return 'arn:aws:sts::123456789012:assumed-role/reviewers/carol';
      },
    };

    // Act
    const viaSts = await review(t, ['resolve', inAws.jobId, '--lane', 'us', '--file', correctFile(), '--json'], aws);
    const viaOs = await review(t, ['resolve', local.jobId, '--lane', 'us', '--file', correctFile(), '--json']);

    // Assess
    assert.equal(viaSts.code, REVIEW_EXIT.ok, viaSts.out);
    assert.deepEqual(JSON.parse(viaSts.out).reviewer, { name: 'arn:aws:sts::123456789012:assumed-role/reviewers/carol', source: 'sts' });
    assert.deepEqual(asked, ['us-east-1'], "STS asked in the lane's region");
    assert.deepEqual(JSON.parse(viaOs.out).reviewer, { name: 'os-user', source: 'os_user' });
    const entry = (await t.ledger.entriesFor(inAws.jobId)).find((e) => e.kind === 'committed');
    assert.equal(entry?.details, 'reviewer (sts): arn:aws:sts::123456789012:assumed-role/reviewers/carol');
  });

  it('refuses bad input with a clear message and its exit code, and writes nothing', async () => {
    // Prepare
    const t = await newLane();
    const { jobId, idempotencyKey } = await jobInReview(t.ledger);
    const rejected = uniqueName('job');
    await t.ledger.record({ jobId: rejected, idempotencyKey: 'c'.repeat(64), region: 'us', kind: 'rejected', reason: 'deadline', attempt: 0, deferrals: 0 });
    const notJson = file('{"invoiceNumber": "INV-SECRET-1", ');
    const invalid = file(JSON.stringify({ ...extractInvoice(englishDocuments(1)[0]!.text), currency: 'euro', taxRate: -1 }));
    const good = correctFile();
    const entries = (await t.ledger.entriesFor(jobId)).length;

    // Act
    const unknownLane = await review(t, ['list', '--lane', 'ap']);
    const unknownLaneJson = await review(t, ['resolve', jobId, '--lane', 'ap', '--file', good, '--json']);
    const brokenFile = await review(t, ['resolve', jobId, '--lane', 'us', '--file', notJson]);
    const missingFile = await review(t, ['resolve', jobId, '--lane', 'us', '--file', join(folder, 'nowhere.json')]);
    const failsSchema = await review(t, ['resolve', jobId, '--lane', 'us', '--file', invalid]);
    const failsSchemaJson = await review(t, ['resolve', jobId, '--lane', 'us', '--file', invalid, '--json']);
    const noSuchJob = await review(t, ['resolve', 'no-such-job', '--lane', 'us', '--file', good]);
    const notInReview = await review(t, ['resolve', rejected, '--lane', 'us', '--file', good, '--json']);
    const noFile = await review(t, ['resolve', jobId, '--lane', 'us']);
    const noSubcommand = await review(t, ['approve', '--lane', 'us']);

    // Assess
    assert.equal(unknownLane.code, REVIEW_EXIT.usage);
    assert.equal(unknownLane.err, 'ratelane review list: unknown lane "ap"; known lanes: us\n');
    assert.equal(unknownLaneJson.code, REVIEW_EXIT.usage);
    assert.deepEqual(JSON.parse(unknownLaneJson.out).error, { kind: 'input', code: 'unknown_lane', message: 'unknown lane "ap"; known lanes: us' });
    assert.equal(brokenFile.code, REVIEW_EXIT.usage);
    assert.match(brokenFile.err, /^ratelane review resolve: --file \S+ is not JSON( \(at position \d+.*\))?; nothing was written\n$/);
    assert.ok(!brokenFile.err.includes('INV-SECRET-1'), "the file's text is not repeated");
    assert.equal(missingFile.code, REVIEW_EXIT.usage);
    assert.match(missingFile.err, /^ratelane review resolve: cannot read --file \S+ \(ENOENT\); nothing was written\n$/);
    assert.equal(failsSchema.code, REVIEW_EXIT.refused);
    assert.match(failsSchema.err, new RegExp(`the corrected object of job ${jobId} fails invoice@1 \\(schema_invalid\\); nothing was written\\n`));
    assert.match(failsSchema.err, /^ {2}currency: .+$/m);
    assert.match(failsSchema.err, /^ {2}taxRate: .+$/m);
    const failure = JSON.parse(failsSchemaJson.out).error;
    assert.equal(failure.code, 'invalid_object');
    assert.deepEqual([...failure.failingFields].sort(), ['currency', 'taxRate']);
    assert.ok(!failsSchemaJson.out.includes('euro'), "the object's values are not repeated");
    assert.equal(noSuchJob.code, REVIEW_EXIT.refused);
    assert.equal(noSuchJob.err, 'ratelane review resolve: lane us has no job no-such-job\n');
    assert.equal(notInReview.code, REVIEW_EXIT.refused);
    assert.deepEqual(JSON.parse(notInReview.out).error, {
      kind: 'conflict',
      code: 'not_in_review',
      message: `job ${rejected} is not in needs_review: it is rejected`,
      state: 'rejected',
    });
    assert.equal(noFile.code, REVIEW_EXIT.usage);
    assert.match(noFile.err, /--file is required/);
    assert.equal(noSubcommand.code, REVIEW_EXIT.usage);
    assert.match(noSubcommand.err, /unknown review subcommand "approve"; known: list, resolve/);
    assert.equal(await t.results.get(idempotencyKey), undefined, 'nothing committed');
    assert.equal((await t.ledger.entriesFor(jobId)).length, entries, 'nothing ledgered');
  });
});
