/**
 * `ratelane batch` end to end against the run's DynamoDB Local and fauxqs and the fake provider's Batch
 * API: submit a folder (a rejected document exits 2, the others are submitted), status with
 * `--reconcile` until the batch is done (exactly one JSON object of the status shape), redrive (exit 0,
 * then nothing the second time; exit 1 when a send fails), cancel (a running batch, and one already
 * done), unknown batches (exit 1) and usage errors (exit 2). The provider key never appears in any output.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { loadCorpus } from '../../../workbench/corpus/index.js';
import { createAwsClients } from '../../../lib/platform/clients.js';
import { createBatchCommand, type BatchWiring } from '../../../lib/cli/batch.js';
import { runCommand } from '../../../lib/cli/command.js';
import { startFakeProvider, type FakeProvider, type FakeProviderBatchOptions } from '../../../workbench/fake-provider/index.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { queueCounts, trackedLanes, waitUntil } from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';

const KEY = 'sk-batch-command-SECRET';
const providers: FakeProvider[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(providers.map((p) => p.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
const newLane = trackedLanes();
const english = loadCorpus().filter((d) => d.language === 'en');
const endpoints = JSON.stringify(testEndpoints());

/** A lane whose provider base URL is a fake provider with these Batch API options, and a runner of `ratelane batch` on it. */
async function setup(batch: FakeProviderBatchOptions, wiring: Omit<BatchWiring, 'lanes'> = {}) {
  const provider = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text), minuteMs: 600, seed: 5, batch });
  providers.push(provider);
  const t = await newLane({ provider: { baseUrl: provider.baseUrl } });
  const run = async (argv: string[], env: Record<string, string> = { RATELANE_PROVIDER_KEY: KEY }) => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) }, env };
    const code = await runCommand(createBatchCommand({ lanes: { us: t.lane }, ...wiring }), [...argv, '--endpoints', endpoints], io);
    assert.ok(!out.join('').includes(KEY) && !err.join('').includes(KEY), 'the key is never printed');
    return {
      code,
      out,
      err,
      json: (): Record<string, unknown> => {
        assert.equal(out.length, 1, 'exactly one JSON object');
        return JSON.parse(out[0]!) as Record<string, unknown>;
      },
    };
  };
  return { t, run };
}

/** A folder of `n` corpus documents and one empty file. */
async function folder(n: number, withEmpty = true): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ratelane-batch-'));
  dirs.push(dir);
  for (let i = 0; i < n; i++) await writeFile(join(dir, `doc-${i}.txt`), english[i]!.text);
  if (withEmpty) await writeFile(join(dir, 'zz-empty.txt'), '');
  return dir;
}

describe('ratelane batch', () => {
  it('submit (a rejected document: exit 2), status --reconcile to the end, redrive once then nothing, cancel of a done batch', async () => {
    // Prepare: every job stalls after half its lines and expires
    const { t, run } = await setup({ validationMs: 100, completionMs: 600, finalizingMs: 100, windowMs: 2_000, expire: 1, expireAnsweredShare: 0.5 });
    const dir = await folder(6);
    // Act
    const submit = await run(['submit', '--region', 'us', '--dir', dir, '--json']);
    const batchId = submit.json().batchId as string;
    let status = await run(['status', batchId, '--region', 'us', '--reconcile', '--json']);
    await waitUntil(
      'the batch is done',
      async () => {
        status = await run(['status', batchId, '--region', 'us', '--reconcile', '--json']);
        return status.json().state === 'done';
      },
      15_000,
      200,
    );
    const redrive = await run(['redrive', batchId, '--region', 'us', '--json']);
    const again = await run(['redrive', batchId, '--region', 'us', '--json']);
    const cancel = await run(['cancel', batchId, '--region', 'us', '--json']);
    const text = await run(['status', batchId, '--region', 'us'], {});
    // Assess: submit
    assert.equal(submit.code, 2, 'a rejected document exits 2');
    const submitted = submit.json();
    assert.equal(submitted.ok, false);
    assert.equal(submitted.command, 'submit');
    assert.equal(submitted.items, 6);
    assert.deepEqual(
      (submitted.rejected as { sourceId: string; reason: string }[]).map((r) => [r.sourceId, r.reason]),
      [['zz-empty.txt', 'empty_document']],
    );
    assert.equal((submitted.parts as unknown[]).length, 1);
    assert.ok(submit.err.join('').includes('checked: 6 accepted, 1 rejected'), 'progress on stderr');
    // status: the report's shape, every item once in the outcome
    assert.equal(status.code, 0);
    const report = status.json() as { outcome: Record<string, number>; items: number; unresolved: { reason: string }[] } & Record<string, unknown>;
    assert.deepEqual(Object.keys(report).sort(), [
      'ageSeconds',
      'batchId',
      'command',
      'counts',
      'createdAt',
      'items',
      'lane',
      'ok',
      'outcome',
      'providerJobs',
      'state',
      'unresolved',
    ]);
    assert.deepEqual(report.outcome, { committed: 3, needsReview: 0, rejected: 0, unresolved: 3, waiting: 0 });
    assert.ok(report.unresolved.every((u) => u.reason === 'expired'));
    // redrive: three sent, then none
    assert.equal(redrive.code, 0);
    assert.deepEqual(Object.keys(redrive.json()).sort(), ['batchId', 'command', 'failed', 'itemIds', 'lane', 'ok', 'redriven']);
    assert.equal(redrive.json().redriven, 3);
    assert.equal(again.code, 0);
    assert.equal(again.json().redriven, 0);
    assert.equal((await queueCounts(t)).visible, 3, 'three jobs on the lane queue, sent once');
    // cancel of a done batch changes nothing; status without --json is a readable summary (no key needed)
    assert.equal(cancel.code, 0);
    assert.equal(cancel.json().changed, false);
    assert.equal(cancel.json().state, 'done');
    assert.equal(text.code, 0);
    assert.match(text.out.join(''), /outcome +committed 3, needs review 0, rejected 0, unresolved 0, waiting 3/);
  });

  it('cancel of a running batch exits 0 and keeps what was answered', async () => {
    // Prepare
    const { run } = await setup({ validationMs: 100, completionMs: 4_000, finalizingMs: 100, cancellingMs: 200 });
    const batchId = (await run(['submit', '--region', 'us', '--dir', await folder(6, false), '--json'])).json().batchId as string;
    await waitUntil(
      'the job runs',
      async () =>
        ((await run(['status', batchId, '--region', 'us', '--reconcile', '--json'])).json().providerJobs as { state: string }[])[0]?.state === 'in_progress',
      10_000,
      100,
    );
    // Act
    const cancel = await run(['cancel', batchId, '--region', 'us', '--json']);
    await waitUntil(
      'the batch is cancelled',
      async () => (await run(['status', batchId, '--region', 'us', '--reconcile', '--json'])).json().state === 'cancelled',
      10_000,
      150,
    );
    const end = (await run(['status', batchId, '--region', 'us', '--json'])).json() as {
      outcome: { committed: number; unresolved: number };
      unresolved: { reason: string }[];
    };
    // Assess
    assert.equal(cancel.code, 0);
    assert.equal(cancel.json().ok, true);
    assert.deepEqual(
      (cancel.json().cancelRequested as { partId: string }[]).map((c) => c.partId),
      ['p000'],
    );
    assert.equal(end.outcome.committed + end.outcome.unresolved, 6);
    assert.ok(end.unresolved.every((u) => u.reason === 'cancelled'));
  });

  it('exit codes: unknown batch 1, a failed send 1, usage errors 2 (as JSON with --json), a missing key 2', async () => {
    // Prepare: SendMessage fails on this lane's queue (the batch and its unresolved items are real)
    const failingSends: BatchWiring['clientsFor'] = (region, e) => {
      const clients = createAwsClients(region, e);
      const real = clients.sqs;
      const sqs = {
        send: (command: unknown) =>
          command instanceof SendMessageCommand
            ? Promise.reject(Object.assign(new Error('down'), { name: 'ServiceUnavailable' }))
            : real.send(command as never),
      };
      return { ...clients, sqs: sqs as unknown as SQSClient };
    };
    const { run } = await setup(
      { validationMs: 100, completionMs: 300, finalizingMs: 100, windowMs: 1_500, expire: 1, expireAnsweredShare: 0 },
      { clientsFor: failingSends },
    );
    const batchId = (await run(['submit', '--region', 'us', '--dir', await folder(3, false), '--json'])).json().batchId as string;
    await waitUntil(
      'the batch is done',
      async () => (await run(['status', batchId, '--region', 'us', '--reconcile', '--json'])).json().state === 'done',
      10_000,
      150,
    );
    // Act
    const redrive = await run(['redrive', batchId, '--region', 'us', '--json']);
    const unknown = await run(['status', 'b-nope', '--region', 'us', '--json']);
    const noId = await run(['redrive', '--region', 'us', '--json']);
    const badSub = await run(['frobnicate', '--region', 'us']);
    const noKey = await run(['cancel', batchId, '--region', 'us', '--json'], {});
    const badKeyEnv = await run(['cancel', batchId, '--region', 'us', '--api-key-env', 'NOT_SET_HERE', '--json'], {});
    // Assess
    assert.equal(redrive.code, 1);
    assert.equal(redrive.json().ok, false);
    assert.deepEqual(
      redrive.json().failed,
      [0, 1, 2].map((i) => ({ itemId: `r000000000${i}`, errorName: 'ResendFailedError' })),
    );
    assert.equal(unknown.code, 1);
    assert.deepEqual(unknown.json(), { command: 'status', ok: false, error: { kind: 'not_found', message: 'no batch b-nope in lane us' } });
    assert.equal(noId.code, 2);
    assert.equal((noId.json().error as { kind: string }).kind, 'usage');
    assert.equal(badSub.code, 2);
    assert.match(badSub.err.join(''), /unknown batch subcommand "frobnicate"/);
    assert.equal(noKey.code, 2);
    assert.match((noKey.json().error as { message: string }).message, /RATELANE_PROVIDER_KEY/);
    assert.equal(badKeyEnv.code, 2);
  });
});
