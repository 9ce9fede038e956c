/**
 * The poller's invocation slots and the local lane limit: a lowered maximum concurrency takes effect
 * as running invocations end, a restored one at once, as a mapping's `ScalingConfig` does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Slots } from '../../../../workbench/local-stack/poller/poller.js';
import { laneChangeLine, LocalLanePauseController, type PausablePoller } from '../../../../workbench/local-stack/pause.js';

describe('local stack: invocation slots', () => {
  it('a smaller size holds new takers until enough held slots are released; a larger one lets waiters in at once', async () => {
    // Prepare: 4 slots, all held
    const slots = new Slots(4);
    const signal = new AbortController().signal;
    const held = await Promise.all([1, 2, 3, 4].map(() => slots.acquire(signal)));
    let granted = 0;
    const waiting = [slots.acquire(signal), slots.acquire(signal)].map((p) =>
      p.then((release) => {
        granted++;
        return release;
      }),
    );

    // Act: down to 2, then release three of the four
    slots.resize(2);
    held[0]!();
    held[1]!();
    await new Promise((resolve) => setImmediate(resolve));
    const afterTwo = granted;
    held[2]!();
    await new Promise((resolve) => setImmediate(resolve));
    const afterThree = granted;
    slots.resize(4);
    await Promise.all(waiting);

    // Assess: 2 still held after two releases (no room at size 2); one more after the third; the rest once restored
    assert.equal(afterTwo, 0);
    assert.equal(afterThree, 1);
    assert.equal(granted, 2);
  });

  it('the local lane limit scales every poller and restores them at its end', async () => {
    // Prepare: a poller that records its limits
    const shares: number[] = [];
    const poller: PausablePoller = { pause: async () => undefined, resume: () => undefined, limit: (share) => void shares.push(share) };
    const changes: string[] = [];
    const lines: string[] = [];
    const controller = new LocalLanePauseController(() => poller, {
      onChange: (state) => {
        changes.push(`${state.change} ${state.share}`);
        lines.push(laneChangeLine('us', state));
      },
    });

    // Act: limited to half for 20 ms (owners out), then to a tenth for 20 ms (slots booked ahead)
    await controller.limit(0.5, new Date(Date.now() + 20), 'billing');
    await new Promise((resolve) => setTimeout(resolve, 60));
    await controller.limit(0.1, new Date(Date.now() + 20), 'booked_ahead');
    await new Promise((resolve) => setTimeout(resolve, 60));

    // Assess
    assert.deepEqual(shares, [0.5, 1, 0.1, 1]);
    assert.deepEqual(changes, ['limited 0.5', 'restored 1', 'limited 0.1', 'restored 1']);
    assert.equal(controller.state.limits, 2);
    assert.match(lines[0]!, /LIMITED to 50 % .*: some quota owners are out \(billing\)$/);
    assert.match(lines[2]!, /LIMITED to 10 % .*: its slots are booked more than a provider minute ahead$/);
    controller.dispose();
  });

  it("a pause's end keeps a limit that still holds; a person's resume ends both", async () => {
    // Prepare: limited to half for a minute, paused for 20 ms
    const calls: string[] = [];
    const poller: PausablePoller = {
      pause: async () => void calls.push('pause'),
      resume: () => void calls.push('resume'),
      limit: (share) => void calls.push(`limit ${share}`),
    };
    const controller = new LocalLanePauseController(() => poller);
    await controller.limit(0.5, new Date(Date.now() + 60_000), 'billing');
    await controller.pause(new Date(Date.now() + 20), 'quota_exhausted');

    // Act: the pause ends by its timer, then a person resumes
    await new Promise((resolve) => setTimeout(resolve, 60));
    const afterPause = [...calls];
    await controller.resume();

    // Assess
    assert.deepEqual(afterPause, ['limit 0.5', 'pause', 'resume'], 'still limited after the pause');
    assert.deepEqual(calls.slice(afterPause.length), ['limit 1', 'resume']);
    assert.equal(controller.state.share, 1);
    controller.dispose();
  });
});
