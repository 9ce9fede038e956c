/**
 * A batch lane for the hostile-provider tests: a test lane on the local services, the fake provider's
 * Batch API behind a scripted server (`scripted-batch-server.ts`) that can rewrite what it answers, the
 * lane's OpenAI batch client talking to the scripted server, all on one virtual clock; and what the
 * tests read back: the queue's messages by job id, a log that records what was logged.
 */
import { after } from 'node:test';
import type { Message } from '@aws-sdk/client-sqs';
import { createOpenAiBatchProvider } from '../../../../lib/lanes/batch/providers/openai.js';
import { handleOf, reconcileBatch, type ReconcileDeps } from '../../../../lib/lanes/batch/reconcile.js';
import type { SubmitBatchDeps } from '../../../../lib/lanes/batch/submit.js';
import { BatchManifest } from '../../../../lib/store/manifest.js';
import { manifestTableName } from '../../../../lib/store/manifest-model.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { startFakeProvider, type FakeProvider, type FakeProviderBatchOptions } from '../../../../workbench/fake-provider/index.js';
import { englishDocuments, jobOf, receive, trackedLanes } from '../../../helpers/consumer-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';
import { type ScriptedBatchServer, scriptedBatchServer } from './scripted-batch-server.js';

const KEY = 'sk-batch-scripted';
const running: Array<FakeProvider | ScriptedBatchServer> = [];
after(async () => {
  await Promise.all(running.map((r) => r.stop()));
});
const newLane = trackedLanes();

/** One logged line: its level, message and fields. */
export interface LoggedLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown> | undefined;
}

/** A batch lane whose provider answers through a scripted server; `limits` tightens the batch client's limits. */
export async function scriptedLane(batch: FakeProviderBatchOptions, limits: { maxRecordIdLength?: number } = {}) {
  const clock = virtualClock();
  const fake = await startFakeProvider({ keys: [{ key: KEY }], extract: (text) => extractInvoice(text), minuteMs: 600, seed: 29, batch, now: clock.nowMs });
  running.push(fake);
  const server = await scriptedBatchServer(fake.baseUrl);
  running.push(server);
  const t = await newLane({ provider: { baseUrl: fake.baseUrl } });
  const manifest = new BatchManifest({ dynamodb: t.clients.dynamodb, tableName: manifestTableName(t.lane), now: clock.now });
  const provider = createOpenAiBatchProvider({ apiKey: KEY, baseUrl: server.baseUrl, timeoutMs: 10_000, limits });
  const logs: LoggedLine[] = [];
  const record =
    (level: LoggedLine['level']) =>
    (message: string, ...fields: unknown[]): void => {
      logs.push({ level, message, fields: fields[0] as Record<string, unknown> | undefined });
    };
  const now = clock.now;
  const submitDeps: SubmitBatchDeps = { lane: t.lane, s3: t.clients.s3, manifest, provider, now };
  const reconcileDeps: ReconcileDeps = {
    lane: t.lane,
    manifest,
    provider,
    results: t.results,
    ledger: t.ledger,
    sqs: t.clients.sqs,
    queueUrl: t.queueUrl,
    logger: { info: record('info'), warn: record('warn'), error: record('error') },
    now,
  };
  /** The provider's own batch id of the batch's first part. */
  const providerBatchId = async (batchId: string): Promise<string> => {
    const header = await manifest.header(batchId);
    const id = header?.providerJobs[0]?.providerJobId;
    if (!id) throw new Error(`batch ${batchId} has no provider job`);
    return id;
  };
  /** Moves the clock until the provider has ended every part of the batch (nothing is reconciled meanwhile). */
  const untilEnded = async (batchId: string): Promise<void> => {
    const header = await manifest.header(batchId);
    const handles = (header?.providerJobs ?? []).map((p) => handleOf(header!, p, t.lane.provider.model)!);
    await clock.until(
      `the provider ended ${batchId}`,
      async () => (await Promise.all(handles.map((h) => provider.status(h)))).every((s) => ['finished', 'expired', 'cancelled'].includes(s.state)),
      { everyMs: 200, timeoutMs: 30_000 },
    );
  };
  /** Reconciles until the batch is done; a pass that throws counts as not done (the old code's jam shows as a timeout). */
  const reconcileToEnd = async (batchId: string, timeoutMs = 20_000): Promise<void> => {
    await clock.until(
      `${batchId} is reconciled to the end`,
      async () => {
        try {
          return (await reconcileBatch(batchId, reconcileDeps)).state === 'done';
        } catch {
          return false;
        }
      },
      { everyMs: 200, timeoutMs },
    );
  };
  /** Every message in the lane's queue now (received, so hidden from later receives). */
  const drainMessages = (): Promise<Message[]> => receive(t, { max: 1000, visibilityTimeout: 300 });
  /** How many messages each job id has among `messages`. */
  const perJob = (messages: readonly Message[]): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const m of messages) counts.set(jobOf(m).jobId, (counts.get(jobOf(m).jobId) ?? 0) + 1);
    return counts;
  };
  const documents = (tag: string, n: number, offset = 0) =>
    englishDocuments(n + offset)
      .slice(offset)
      .map((d, i) => ({ text: d.text, sourceId: `${tag}-${i}` }));
  return {
    clock,
    fake,
    server,
    t,
    manifest,
    provider,
    logs,
    submitDeps,
    reconcileDeps,
    providerBatchId,
    untilEnded,
    reconcileToEnd,
    drainMessages,
    perJob,
    documents,
  };
}
