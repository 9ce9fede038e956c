/**
 * Identical live requests at once (the same text, source and versions: one idempotency key) cost one
 * model call between them: the first claims the key, the others wait for its result within their own
 * deadline (answered committed, from the result) or, when it does not come in time, answer pending with
 * the same job. The handler as the live function runs it, on DynamoDB Local and fauxqs, the lane's
 * clock virtual (`virtual-clock.ts`: a waiter's polls pass without waiting).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CapturingSink, englishDocuments, scriptedModel, trackedLanes, type ScriptedModel, type TestLane } from '../../../helpers/consumer-harness.js';
import { liveContext, livePost, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock, type VirtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
const COPIES = 5;

/** A gate that opens once: `open` may be called any number of times. */
function gateOf(): { gate: Promise<void>; open: () => void } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { gate, open };
}

/** A model whose answers wait for `gate` (each call still counted when it starts). */
function gatedModel(gate: Promise<void>, onEnter: (entered: number) => void): ScriptedModel {
  const model = scriptedModel();
  const answer = model.extract.bind(model);
  let entered = 0;
  model.extract = async (request) => {
    onEnter(++entered);
    await gate;
    return answer(request);
  };
  return model;
}

/** Sends `COPIES` identical requests at once; `onAnswered` is told how many have been answered. */
async function identicalRequests(t: TestLane, clock: VirtualClock, model: ScriptedModel, onAnswered: (answered: number) => void) {
  const sink = new CapturingSink();
  const [doc] = englishDocuments(1);
  const body = { text: doc!.text, sourceId: `${doc!.sourceId}#identical`, deadlineMs: 20_000 };
  let answered = 0;
  const responses = await Promise.all(
    Array.from({ length: COPIES }, async (_, i) => {
      const { handler } = testLiveHandler(t, { model, clock, sink });
      const response = await handler(livePost(body, { requestId: `req-identical-${i}` }), liveContext(t));
      onAnswered(++answered);
      return { status: response.statusCode, body: JSON.parse(String(response.body)) as { status: string; jobId: string; duplicate?: boolean } };
    }),
  );
  return { responses, sink };
}

describe('live lane: identical requests at once', () => {
  it('five identical requests make one model call; the four others wait for its result and answer it committed', async () => {
    // Prepare: the model answers once the four other requests are waiting (each has polled for the result)
    const t = await newLane();
    const clock = virtualClock();
    const { gate, open } = gateOf();
    const sleep = clock.sleep;
    let polls = 0;
    clock.sleep = (ms, signal) => {
      if (++polls >= COPIES - 1) open();
      return sleep(ms, signal);
    };
    const model = gatedModel(gate, (entered) => entered === COPIES && open());

    // Act
    const { responses, sink } = await identicalRequests(t, clock, model, () => undefined);

    // Assess
    assert.equal(model.calls.length, 1, 'one model call for five requests');
    assert.deepEqual(
      responses.map((r) => [r.status, r.body.status]),
      Array.from({ length: COPIES }, () => [200, 'committed']),
    );
    assert.equal(new Set(responses.map((r) => r.body.jobId)).size, 1, 'one job');
    assert.equal(responses.filter((r) => r.body.duplicate).length, COPIES - 1, 'four answered from the committed result');
    assert.equal(sink.totals.total.KeyInProgress, COPIES - 1);
    assert.equal((await t.results.scanAll()).length, 1, 'committed once');
  });

  it('when the holder outlasts their deadlines, the others answer 202 pending with the same job, and still no second call', async () => {
    // Prepare: the model answers only once the four other requests have been answered
    const t = await newLane();
    const clock = virtualClock();
    const { gate, open } = gateOf();
    const model = gatedModel(gate, (entered) => entered === COPIES && open());

    // Act
    const { responses } = await identicalRequests(t, clock, model, (answered) => answered === COPIES - 1 && open());

    // Assess: the holder's commit, four pending answers naming its job
    assert.equal(model.calls.length, 1, 'one model call for five requests');
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 202, 202, 202, 202]);
    assert.equal(new Set(responses.map((r) => r.body.jobId)).size, 1, 'the same job');
    assert.equal((await t.results.scanAll()).length, 1, 'committed once');
  });
});
