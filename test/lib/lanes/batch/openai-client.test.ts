/**
 * The OpenAI batch client against the local fake provider's Batch API (`/v1/files`, `/v1/batches`,
 * real wire format, scaled time): a batch from upload to result lines, the enqueued-token refusal as
 * a throttle, seeded per-line faults (500s and dropped lines) each accounted for once, a cancel, a
 * rejected key, and results asked for too early.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { BatchJobNotFinishedError, BatchProviderRefusedError, BatchSubmitThrottledError } from '../../../../lib/lanes/batch/providers/errors.js';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import type {
  BatchProvider,
  BatchRequest,
  ProviderJobHandle,
  ProviderJobState,
  ProviderJobStatus,
  ProviderResultLine,
} from '../../../../lib/lanes/batch/providers/provider.js';
import { getExtractionPrompt, getExtractionSchema } from '../../../../lib/contract/schemas/registry.js';
import type { FakeProvider, FakeProviderBatchOptions } from '../../../../workbench/fake-provider/index.js';
import { fake, RESULT, stopAll } from '../../providers/support.js';
import { virtualClock, type VirtualClock } from '../../../helpers/virtual-clock.js';

afterEach(stopAll);

const KEY = 'sk-test-a';
const schema = getExtractionSchema('invoice@1');
const prompt = getExtractionPrompt('invoice@1', 'invoice-extract@1')!;
const FAST: FakeProviderBatchOptions = { validationMs: 20, completionMs: 150, finalizingMs: 20, cancellingMs: 20 };

const requests = (n: number): BatchRequest[] =>
  Array.from({ length: n }, (_, i) => ({
    recordId: `job-${i}`,
    messages: prompt.buildMessages(`Invoice INV-${i}\nTotal ${i}.50 EUR`),
    jsonSchemaName: schema.jsonSchemaName,
    jsonSchema: schema.jsonSchema,
    model: 'gpt-4o-mini',
  }));

/** A fake Batch API on a virtual clock, and a client of it (`at`: the clock stands still but for the test's moves; else it runs on with real time too). */
async function start(batch: FakeProviderBatchOptions, key = KEY, at?: number): Promise<{ server: FakeProvider; client: BatchProvider; clock: VirtualClock }> {
  const clock = virtualClock(at === undefined ? {} : { at });
  const server = await fake({ minuteMs: 600, batch, now: clock.nowMs });
  return { server, clock, client: createOpenAiBatchProvider({ apiKey: key, baseUrl: server.baseUrl, timeoutMs: 5_000 }) };
}

/** Polls the job's status until it is in one of `states`, moving the provider's clock 20 ms between two polls. */
async function until(
  clock: VirtualClock,
  client: BatchProvider,
  handle: ProviderJobHandle,
  states: ProviderJobState[],
  limitMs = 10_000,
): Promise<ProviderJobStatus> {
  const started = clock.nowMs();
  for (;;) {
    const status = await client.status(handle);
    if (states.includes(status.state)) return status;
    assert.ok(clock.nowMs() - started < limitMs, `still ${status.providerState} after ${limitMs} ms`);
    clock.advance(20);
  }
}

async function collect(lines: AsyncIterable<ProviderResultLine>): Promise<ProviderResultLine[]> {
  const out: ProviderResultLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe('OpenAI batch client against the fake Batch API', () => {
  it('uploads, creates, watches and reads a batch: one ok line per record, with usage', async () => {
    // Prepare
    const { server, client, clock } = await start(FAST);
    const [input] = client.prepare(requests(4), { batchId: 'b-openai-1' });
    // Act
    const handle = await client.submit(input!);
    const status = await until(clock, client, handle, ['finished', 'failed', 'expired', 'cancelled']);
    const lines = await collect(client.readResults(handle));
    // Assess
    assert.equal(status.state, 'finished');
    assert.deepEqual(status.counts, { total: 4, succeeded: 4, failed: 0 });
    assert.match(handle.jobId, /^batch_/);
    assert.match(handle.inputRef, /^file-/);
    assert.deepEqual(
      lines.map((l) => l.recordId),
      ['job-0', 'job-1', 'job-2', 'job-3'],
    );
    for (const line of lines) {
      assert.ok(line.ok, JSON.stringify(line));
      assert.deepEqual(JSON.parse(line.content), RESULT);
      assert.ok(line.usage.inputTokens > 0 && line.usage.outputTokens > 0);
    }
    assert.equal(server.stats().batches.created, 1);
  });

  it('reports the enqueued-token refusal as a failed job whose error is BatchSubmitThrottledError', async () => {
    const { client, clock } = await start({ ...FAST, enqueuedTokenLimit: 10 });
    const handle = await client.submit(client.prepare(requests(2))[0]!);
    const status = await until(clock, client, handle, ['failed', 'in_progress', 'finished']);
    assert.equal(status.state, 'failed');
    assert.ok(status.error instanceof BatchSubmitThrottledError);
    assert.equal(status.error.reason, 'enqueued_tokens');
  });

  it('accounts for every record once under 500s and dropped lines', async () => {
    // Prepare
    const { server, client, clock } = await start({ ...FAST, errorRate: 0.3, dropRate: 0.2 });
    const sent = requests(30);
    const handle = await client.submit(client.prepare(sent)[0]!);
    await until(clock, client, handle, ['finished']);
    // Act
    const lines = await collect(client.readResults(handle));
    // Assess
    const ids = lines.map((l) => l.recordId);
    assert.deepEqual([...ids].sort(), sent.map((r) => r.recordId).sort(), 'each record exactly once, nothing unmatched');
    const { droppedCustomIds, erroredCustomIds } = server.stats().batches;
    const failed = (code: string) => lines.filter((l) => !l.ok && l.code === code).map((l) => l.recordId);
    assert.deepEqual(failed('no_result').sort(), [...droppedCustomIds].sort());
    assert.deepEqual(
      lines
        .filter((l) => !l.ok && l.code !== 'no_result')
        .map((l) => l.recordId)
        .sort(),
      [...erroredCustomIds].sort(),
    );
    assert.ok(droppedCustomIds.length > 0 && erroredCustomIds.length > 0, 'the seeded faults hit some lines');
  });

  it('cancels a running batch; unanswered records come back as batch_cancelled', async () => {
    const { client, clock } = await start({ ...FAST, completionMs: 60_000 });
    const handle = await client.submit(client.prepare(requests(3))[0]!);
    await until(clock, client, handle, ['in_progress']);
    await client.cancel(handle);
    const status = await until(clock, client, handle, ['cancelled']);
    const lines = await collect(client.readResults(handle));
    assert.equal(status.state, 'cancelled');
    assert.deepEqual(
      lines.map((l) => [l.recordId, l.ok ? 'ok' : l.code]),
      [
        ['job-0', 'batch_cancelled'],
        ['job-1', 'batch_cancelled'],
        ['job-2', 'batch_cancelled'],
      ],
    );
  });

  it("sends the lane's file expiry, and deletes a batch's files only once it has ended (a file already gone counts as deleted)", async () => {
    // Prepare: a client keeping files 2 days (files expire on the fake's scaled clock: its window stands for 24 h);
    // the clock moves only when the test moves it, so the batch is still running at the first erase however slow the machine
    const { server, clock } = await start({ ...FAST, errorRate: 0.5 }, KEY, Date.parse('2026-03-02T09:00:00Z'));
    const client = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: server.baseUrl, timeoutMs: 5_000, fileExpirySeconds: 2 * 86_400 });
    const sdk = new OpenAI({ apiKey: KEY, baseURL: server.baseUrl, maxRetries: 0 });
    const handle = await client.submit(client.prepare(requests(6))[0]!);
    // Act: erasing while it runs, then after it ended, twice
    const running = await client.eraseRecords([handle], new Set(['job-0'])).catch((error: unknown) => error);
    const ended = await until(clock, client, handle, ['finished']);
    const first = await client.eraseRecords([handle], new Set(['job-0']));
    const again = await client.eraseRecords([handle], new Set(['job-0']));
    // Assess
    assert.ok(running instanceof BatchJobNotFinishedError, 'a running batch keeps its files');
    const files = [handle.inputRef, ended.outputRef, ended.errorRef];
    assert.ok(
      files.every((id) => typeof id === 'string' && id.startsWith('file-')),
      'the batch had an output and an error file',
    );
    assert.deepEqual(first, { filesDeleted: files, filesRewritten: [], linesRemoved: 0, tooLarge: [], refused: [] });
    assert.deepEqual(again.filesDeleted, files, 'deleting again finds them gone, which is what was asked');
    assert.equal(server.stats().batches.filesDeleted, 3);
    for (const id of files) await assert.rejects(sdk.files.retrieve(id!), (error) => error instanceof OpenAI.NotFoundError);
    const other = await client.submit(client.prepare(requests(1), { batchId: 'b-kept' })[0]!);
    const kept = await sdk.files.retrieve(other.inputRef);
    const windowMs = 1440 * 600; // the fake's 24 h: a day of its 600 ms minutes
    assert.ok(
      Math.abs((kept.expires_at ?? 0) - kept.created_at - (2 * windowMs) / 1000) <= 1,
      `expires 2 scaled days after upload: ${kept.created_at} → ${kept.expires_at}`,
    );
  });

  it('refuses a wrong key with BatchProviderRefusedError, and results before the end with BatchJobNotFinishedError', async () => {
    const { server, client } = await start({ ...FAST, completionMs: 60_000 });
    const wrong = createOpenAiBatchProvider({ apiKey: 'sk-wrong', baseUrl: server.baseUrl, timeoutMs: 5_000 });
    await assert.rejects(wrong.submit(wrong.prepare(requests(1))[0]!), (error) => error instanceof BatchProviderRefusedError && error.status === 401);
    const handle = await client.submit(client.prepare(requests(1))[0]!);
    await assert.rejects(collect(client.readResults(handle)), BatchJobNotFinishedError);
  });
});
