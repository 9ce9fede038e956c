/**
 * The local fake provider's Batch API, driven by the official `openai` SDK: upload, create, poll to
 * completed and read the output file (the chat route's body shape); seeded drops, errors and lines whose
 * content fails the schema that match stats(); expiry and cancel keeping the answered part; the enqueued-token limit failing a batch as
 * OpenAI does; the upload's checks and the line errors that fail a batch in validation; keys and owners.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import type { BatchOutputLine, ChatCompletionBody, FakeProvider, FakeProviderBatchOptions } from '../../../workbench/fake-provider/index.js';
import { call, MODEL, promptTokensFor, SCHEMA, start, stopStarted } from './support.js';

afterEach(stopStarted);

const FAST: FakeProviderBatchOptions = { validationMs: 20, completionMs: 100, finalizingMs: 40, cancellingMs: 20, windowMs: 5_000 };
const ENDED = ['completed', 'failed', 'expired', 'cancelled'];

/** A request line with the same prompt the chat tests send (so `promptTokensFor` counts its tokens). */
function line(customId: string, documentText = `INV-${customId}\nTotal 12.50 EUR`, body: Record<string, unknown> = {}): Record<string, unknown> {
  const messages = [
    { role: 'system', content: 'Extract the invoice fields as JSON.' },
    { role: 'user', content: `Read this invoice.\n<document>\n${documentText}\n</document>` },
  ];
  const request = { model: MODEL, messages, response_format: { type: 'json_schema', json_schema: { name: 'invoice_v1', schema: SCHEMA, strict: true } } };
  return { custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { ...request, ...body } };
}

const jsonl = (lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function clientOf(provider: FakeProvider, apiKey = 'sk-test-a'): OpenAI {
  return new OpenAI({ apiKey, baseURL: provider.baseUrl, maxRetries: 0 });
}

async function upload(client: OpenAI, content: string, name = 'input.jsonl') {
  return client.files.create({ file: await toFile(Buffer.from(content), name), purpose: 'batch' });
}

async function submit(client: OpenAI, lines: unknown[], metadata?: Record<string, string>): Promise<Batch> {
  const file = await upload(client, jsonl(lines));
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', ...(metadata ? { metadata } : {}) });
}

/** The provider's clock, moved by hand: batches change state only when the test moves it. */
interface Clock {
  now: () => number;
  tick: (ms: number) => void;
}

function manualClock(): Clock {
  let t = Date.UTC(2026, 0, 5, 9);
  return { now: () => t, tick: (ms) => (t += ms) };
}

/** Moves the clock 10 ms at a time until the batch is in one of `statuses`; returns it and every status seen since `created`. */
async function waitFor(client: OpenAI, clock: Clock, created: Batch, statuses = ENDED): Promise<{ batch: Batch; seen: string[] }> {
  const seen: string[] = [created.status];
  for (let step = 0; step < 2_000; step += 1) {
    const batch = await client.batches.retrieve(created.id);
    if (seen.at(-1) !== batch.status) seen.push(batch.status);
    if (statuses.includes(batch.status)) return { batch, seen };
    clock.tick(10);
  }
  return assert.fail(`batch ${created.id} never reached ${statuses.join('/')}; seen ${seen.join(' → ')}`);
}

async function linesOf(client: OpenAI, fileId: string | null | undefined): Promise<BatchOutputLine[]> {
  if (!fileId) return [];
  const text = await (await client.files.content(fileId)).text();
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as BatchOutputLine);
}

/** `error.type` of the OpenAI error body an error-file line carries. */
function errorTypeOf(l: BatchOutputLine | undefined): string | undefined {
  return (l?.response?.body as { error?: { type?: string } } | undefined)?.error?.type;
}

async function apiError(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => assert.fail('expected an API error'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof OpenAI.APIError, String(error));
  return error;
}

describe('fake provider: Batch API', () => {
  it('runs a batch to completed and answers each line as the chat route does', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ now: clock.now, batch: FAST });
    const client = clientOf(provider);
    const good = ids('ok', 5);
    const chatBody = (await (await call(provider)).json()) as ChatCompletionBody;
    // Act
    const noDocument = line('no-document', 'x', { messages: [{ role: 'user', content: 'hi' }] });
    const file = await upload(client, jsonl([...good.map((id) => line(id)), noDocument]));
    const metadata = { lane: 'backfill' };
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata });
    const { batch, seen } = await waitFor(client, clock, created);
    const output = await linesOf(client, batch.output_file_id);
    const errors = await linesOf(client, batch.error_file_id);
    // Assess
    assert.match(file.id, /^file-\w+$/);
    assert.deepEqual([file.object, file.purpose, file.filename, file.bytes > 0], ['file', 'batch', 'input.jsonl', true]);
    assert.match(created.id, /^batch_\w+$/);
    assert.deepEqual([created.object, created.status, created.request_counts], ['batch', 'validating', { total: 0, completed: 0, failed: 0 }]);
    assert.deepEqual(seen, ['validating', 'in_progress', 'finalizing', 'completed']);
    assert.deepEqual([batch.request_counts, batch.model, batch.metadata], [{ total: 6, completed: 5, failed: 1 }, MODEL, { lane: 'backfill' }]);
    for (const key of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) assert.equal(typeof batch[key], 'number', key);
    assert.equal(batch.expires_at, batch.created_at + 5);
    assert.deepEqual(
      output.map((l) => l.custom_id),
      good,
    );
    for (const [i, l] of output.entries()) {
      const body = l.response?.body as ChatCompletionBody;
      assert.match(l.id, /^batch_req_\w+$/);
      assert.match(l.response?.request_id ?? '', /^req_[0-9a-f]{32}$/);
      assert.equal(l.response?.status_code, 200);
      assert.equal(l.error, null);
      assert.deepEqual(Object.keys(body).sort(), Object.keys(chatBody).sort());
      assert.deepEqual(JSON.parse(body.choices[0]?.message.content ?? ''), { invoiceNumber: `INV-ok-${i}`, total: 12.5, currency: 'EUR' });
      assert.equal(body.usage.prompt_tokens, promptTokensFor(`INV-ok-${i}\nTotal 12.50 EUR`));
    }
    const inputTokens = output.reduce((total, l) => total + ((l.response?.body as ChatCompletionBody | undefined)?.usage.prompt_tokens ?? 0), 0);
    assert.equal(batch.usage?.input_tokens, inputTokens);
    assert.equal(errors.length, 1);
    assert.deepEqual([errors[0]?.custom_id, errors[0]?.response?.status_code, errors[0]?.error], ['no-document', 400, null]);
    assert.equal(errorTypeOf(errors[0]), 'invalid_request_error');
    const stats = provider.stats().batches;
    assert.deepEqual([stats.created, stats.completed, stats.linesAnswered, stats.linesErrored], [1, 1, 5, 1]);
    assert.deepEqual(stats.erroredCustomIds, ['no-document']);
  });

  it('drops and errors lines as seeded, and stats() names exactly the missing and errored ids', async () => {
    // Prepare
    const batch: FakeProviderBatchOptions = { ...FAST, dropRate: 0.2, errorRate: 0.2 };
    const all = ids('job', 40);
    async function run(seed: number) {
      const clock = manualClock();
      const provider = await start({ now: clock.now, batch, seed });
      const client = clientOf(provider);
      const done = (
        await waitFor(
          client,
          clock,
          await submit(
            client,
            all.map((id) => line(id)),
          ),
        )
      ).batch;
      return { done, output: await linesOf(client, done.output_file_id), errors: await linesOf(client, done.error_file_id), stats: provider.stats().batches };
    }
    // Act
    const first = await run(7);
    const again = await run(7);
    // Assess
    const answered = first.output.map((l) => l.custom_id);
    const errored = first.errors.map((l) => l.custom_id);
    const missing = all.filter((id) => !answered.includes(id) && !errored.includes(id));
    assert.ok(missing.length > 0 && errored.length > 0, `missing ${missing.length}, errored ${errored.length}`);
    assert.deepEqual(first.stats.droppedCustomIds, missing);
    assert.deepEqual(first.stats.erroredCustomIds, errored);
    assert.deepEqual([first.stats.linesDropped, first.stats.linesErrored, first.stats.linesAnswered], [missing.length, errored.length, answered.length]);
    assert.deepEqual(first.done.request_counts, { total: 40, completed: answered.length + missing.length, failed: errored.length });
    for (const l of first.errors) {
      assert.deepEqual([l.response?.status_code, l.error], [500, null]);
      assert.equal(errorTypeOf(l), 'server_error');
    }
    assert.deepEqual([again.stats.droppedCustomIds, again.stats.erroredCustomIds], [missing, errored]);
  });

  it('answers lines whose content fails the schema as seeded, each a well-formed completion, and stats() names exactly them', async () => {
    // Prepare
    const lines = ids('inv', 40).map((id) => line(id));
    async function run(seed: number) {
      const clock = manualClock();
      const provider = await start({ now: clock.now, batch: { ...FAST, dropRate: 0.1, invalidRate: 0.3 }, seed });
      const client = clientOf(provider);
      const initial = provider.stats().batches.invalidCustomIds;
      const done = (await waitFor(client, clock, await submit(client, lines))).batch;
      return { done, initial, output: await linesOf(client, done.output_file_id), stats: provider.stats().batches };
    }
    // Act
    const first = await run(11);
    const again = await run(11);
    // Assess: a line is invalid when its content is not JSON (prose around it) or JSON missing a required field
    const bodyOf = (l: BatchOutputLine) => l.response?.body as ChatCompletionBody | undefined;
    const contentOf = (l: BatchOutputLine) => bodyOf(l)?.choices[0]?.message.content ?? '';
    const failsSchema = (c: string) => !c.startsWith('{') || SCHEMA.required.some((field) => !(field in JSON.parse(c)));
    const invalid = first.output.filter((l) => failsSchema(contentOf(l)));
    const invalidIds = invalid.map((l) => l.custom_id);
    assert.deepEqual(first.initial, [], 'the list is there, empty, before any batch');
    assert.ok(invalid.length > 0 && first.stats.droppedCustomIds.length > 0, `invalid ${invalid.length}, dropped ${first.stats.droppedCustomIds.length}`);
    assert.ok(invalid.some((l) => contentOf(l).startsWith('{')) && invalid.some((l) => !contentOf(l).startsWith('{')), 'both ways of failing');
    assert.deepEqual(first.stats.invalidCustomIds, invalidIds);
    for (const l of invalid) assert.deepEqual([l.response?.status_code, l.error, bodyOf(l)?.choices[0]?.finish_reason], [200, null, 'stop']);
    assert.equal(first.stats.linesAnswered, first.output.length, 'invalid lines are answered lines');
    assert.deepEqual(first.done.request_counts, { total: 40, completed: 40, failed: 0 });
    assert.deepEqual(again.stats.invalidCustomIds, invalidIds, 'the same seed spoils the same lines');
    await assert.rejects(start({ batch: { dropRate: 0.5, errorRate: 0.3, invalidRate: 0.3 } }), /batch.invalidRate must not exceed 1/);
  });

  it('expires a stalled batch after its window and keeps the answered part in the output file', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ now: clock.now, batch: { ...FAST, windowMs: 400, expire: 1, expireAnsweredShare: 0.5 } });
    const client = clientOf(provider);
    const all = ids('exp', 10);
    // Act
    const { batch, seen } = await waitFor(
      client,
      clock,
      await submit(
        client,
        all.map((id) => line(id)),
      ),
    );
    const output = await linesOf(client, batch.output_file_id);
    const errors = await linesOf(client, batch.error_file_id);
    // Assess
    assert.deepEqual(seen, ['validating', 'in_progress', 'expired']);
    assert.equal(typeof batch.expired_at, 'number');
    assert.deepEqual(batch.request_counts, { total: 10, completed: 5, failed: 5 });
    assert.deepEqual(
      output.map((l) => l.custom_id),
      all.slice(0, 5),
    );
    const expired = { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' };
    assert.deepEqual(
      errors.map((l) => [l.custom_id, l.response, l.error]),
      all.slice(5).map((id) => [id, null, expired]),
    );
    assert.deepEqual([provider.stats().batches.expired, provider.stats().batches.linesExpired], [1, 5]);
  });

  it('cancels an in-progress batch through cancelling, keeps the answered part, and refuses to cancel a finished one', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ now: clock.now, batch: { ...FAST, completionMs: 1_000 } });
    const client = clientOf(provider);
    const all = ids('c', 10);
    const created = await submit(
      client,
      all.map((id) => line(id)),
    );
    await waitFor(client, clock, created, ['in_progress']);
    clock.tick(350); // lines are answered every 100 ms: three are done
    // Act
    const cancelling = await client.batches.cancel(created.id);
    const { batch } = await waitFor(client, clock, created);
    const again = await client.batches.cancel(created.id);
    const output = await linesOf(client, batch.output_file_id);
    const errors = await linesOf(client, batch.error_file_id);
    const finished = (await waitFor(client, clock, await submit(client, [line('quick')]))).batch;
    const conflict = await apiError(client.batches.cancel(finished.id));
    // Assess
    assert.deepEqual([cancelling.status, typeof cancelling.cancelling_at], ['cancelling', 'number']);
    assert.deepEqual([batch.status, typeof batch.cancelled_at, again.status], ['cancelled', 'number', 'cancelled']);
    assert.deepEqual(
      output.map((l) => l.custom_id),
      all.slice(0, 3),
    );
    assert.deepEqual(batch.request_counts, { total: 10, completed: 3, failed: 7 });
    assert.deepEqual(
      [...output, ...errors].map((l) => l.custom_id),
      all,
    );
    assert.ok(errors.every((l) => l.response === null && l.error?.code === 'batch_cancelled'));
    assert.deepEqual([conflict.status, conflict.message], [409, "409 Cannot cancel a batch with status 'completed'."]);
    assert.deepEqual([provider.stats().batches.cancelled, provider.stats().batches.linesCancelled], [1, 7]);
  });

  it("fails a batch that would exceed the owner's enqueued-token limit, and admits it once the queue has drained", async () => {
    // Prepare: room for the first batch's three lines, not for one more line while they are enqueued
    const tokens = promptTokensFor('INV-q-0\nTotal 12.50 EUR');
    const clock = manualClock();
    const provider = await start({ now: clock.now, batch: { ...FAST, completionMs: 300, enqueuedTokenLimit: 3 * tokens + 2 } });
    const client = clientOf(provider);
    const first = await submit(
      client,
      ['q-0', 'q-1', 'q-2'].map((id) => line(id, 'INV-q-0\nTotal 12.50 EUR')),
    );
    await waitFor(client, clock, first, ['in_progress']);
    // Act
    const refused = await submit(client, [line('late', 'INV-q-0\nTotal 12.50 EUR')]);
    const failed = (await waitFor(client, clock, refused)).batch;
    await waitFor(client, clock, first);
    const later = (await waitFor(client, clock, await submit(client, [line('late', 'INV-q-0\nTotal 12.50 EUR')]))).batch;
    // Assess: created 200 `validating`, then `failed` with OpenAI's token_limit_exceeded entry
    assert.equal(refused.status, 'validating');
    assert.deepEqual([failed.status, typeof failed.failed_at, failed.output_file_id, failed.error_file_id], ['failed', 'number', null, null]);
    const error = failed.errors?.data?.[0];
    assert.deepEqual([error?.code, error?.line, error?.param], ['token_limit_exceeded', null, null]);
    assert.match(
      error?.message ?? '',
      /^Enqueued token limit reached for gpt-4o-mini in organization org-\w{24}\. Limit: [\d,]+ enqueued tokens\. Please try again once some in_progress batches have been completed\.$/,
    );
    assert.equal(later.status, 'completed');
    assert.equal(provider.stats().batches.failed, 1);
  });

  it('refuses at upload only a file that is not JSONL or over a limit; bad lines fail the batch in validation', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ now: clock.now, batch: { ...FAST, maxFileBytes: 6_000, maxRequestsPerFile: 8 } });
    const client = clientOf(provider);
    const { method: _method, ...noMethod } = line('no-method');
    const lines = [
      line('a'),
      '{"custom_id": "broken",',
      noMethod,
      line('a'),
      { ...line('wrong-url'), url: '/v1/embeddings' },
      line('streams', undefined, { stream: true }),
      line('no-model', undefined, { model: undefined }),
    ];
    // Act
    const empty = await apiError(upload(client, ''));
    const notJson = await apiError(upload(client, 'custom_id,method\nx,POST\n', 'input.csv'));
    const tooBig = await apiError(upload(client, jsonl(ids('big', 8).map((id) => line(id, 'x'.repeat(800))))));
    const tooMany = await apiError(upload(client, jsonl(ids('many', 9).map((id) => line(id)))));
    const created = await submit(client, lines);
    const failed = (await waitFor(client, clock, created)).batch;
    const missingFile = await client.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' });
    const noFile = (await waitFor(client, clock, missingFile)).batch;
    const create = (body: Record<string, unknown>) => apiError(client.batches.create(body as never));
    const badEndpoint = await create({ input_file_id: 'file-x', endpoint: '/v1/embeddings', completion_window: '24h' });
    const badWindow = await create({ input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '1h' });
    const noInput = await create({ endpoint: '/v1/chat/completions', completion_window: '24h' });
    const badMetadata = await create({ input_file_id: 'file-x', endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { tags: ['a'] } });
    // Assess
    for (const refusal of [empty, notJson]) assert.deepEqual([refusal.status, refusal.message], [400, '400 Invalid file format for Batch API. Must be .jsonl']);
    assert.equal(tooBig.status, 413);
    assert.match(tooBig.message, /larger than the 6000 maximum for the gpt-4o-mini model/);
    assert.equal(tooMany.status, 400);
    assert.deepEqual([failed.status, typeof failed.failed_at, failed.request_counts?.total], ['failed', 'number', 0]);
    assert.deepEqual(
      failed.errors?.data?.map((e) => [e.line, e.code, e.param]),
      [
        [2, 'invalid_json_line', null],
        [3, 'missing_required_parameter', 'method'],
        [4, 'duplicate_custom_id', 'custom_id'],
        [5, 'invalid_url', 'url'],
        [6, 'streaming_unsupported', 'body.stream'],
        [7, 'invalid_request', 'body.model'],
      ],
    );
    assert.deepEqual(
      noFile.errors?.data?.map((e) => [e.code, e.param]),
      [['invalid_request', 'file_id']],
    );
    assert.deepEqual(
      [badEndpoint, badWindow, noInput, badMetadata].map((e) => [e.status, e.code, e.param]),
      [
        [400, 'invalid_value', 'endpoint'],
        [400, 'invalid_value', 'completion_window'],
        [400, 'missing_required_parameter', 'input_file_id'],
        [400, 'invalid_type', 'metadata.tags'],
      ],
    );
  });

  it('authenticates as the chat route does and shows each owner only its own files and batches', async () => {
    // Prepare
    const clock = manualClock();
    const provider = await start({ now: clock.now, keys: [{ key: 'sk-test-a' }, { key: 'sk-test-b' }], batch: FAST });
    const a = clientOf(provider);
    const b = clientOf(provider, 'sk-test-b');
    const mine = [await submit(a, [line('1')]), await submit(a, [line('2')]), await submit(a, [line('3')])];
    const done = (await waitFor(a, clock, mine[0] as Batch)).batch;
    // Act
    const unknownKey = await apiError(clientOf(provider, 'sk-nope').batches.list());
    const foreignBatch = await apiError(b.batches.retrieve(done.id));
    const foreignFile = await apiError(b.files.content(done.output_file_id ?? ''));
    const foreignCancel = await apiError(b.batches.cancel(done.id));
    const firstPage = await a.batches.list({ limit: 2 });
    const everything: string[] = [];
    for await (const batch of a.batches.list({ limit: 2 })) everything.push(batch.id);
    const othersList = await b.batches.list();
    // Assess
    assert.equal(unknownKey.status, 401);
    assert.deepEqual([foreignBatch.status, foreignFile.status, foreignCancel.status], [404, 404, 404]);
    assert.match(foreignFile.message, /No such File object: file-/);
    assert.deepEqual(
      firstPage.data.map((x) => x.id),
      [mine[2]?.id, mine[1]?.id],
    );
    assert.equal(firstPage.hasNextPage(), true);
    assert.deepEqual(everything, mine.map((x) => x.id).reverse());
    assert.deepEqual(othersList.data, []);
  });
});
