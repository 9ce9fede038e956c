/**
 * `ratelane consume`: what it refuses before it starts anything (exit 2 with the reason), and how a
 * process follows the lane's pause and limit another process claimed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCommand } from '../../../../lib/cli/command.js';
import { consumeCommand } from '../../../../workbench/drivers/consume/command.js';
import { followLane } from '../../../../workbench/drivers/consume/consume.js';
import { LocalLanePauseController } from '../../../../workbench/local-stack/pause.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';

/** Runs `ratelane consume argv` with no RATELANE_ENDPOINTS; its exit code and stderr. */
async function consume(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = (s: string): boolean => {
    stderr += s;
    return true;
  };
  const io = { stdout: { write: () => true }, stderr: { write }, env: {} };
  const code = await runCommand(consumeCommand, argv, io);
  return { code, stderr };
}

describe('ratelane consume: usage', () => {
  it('needs a lane, given endpoints and an http(s) provider URL; refuses an unknown lane', async () => {
    // Prepare
    const endpoints = ['--endpoints', '{"sqs":"http://127.0.0.1:1","s3":"http://127.0.0.1:1","dynamodb":"http://127.0.0.1:2"}'];
    // Act
    const noLane = await consume([...endpoints]);
    const noEndpoints = await consume(['--lane', 'us']);
    const badUrl = await consume(['--lane', 'us', ...endpoints, '--provider-url', 'ftp://x']);
    const unknown = await consume(['--lane', 'nowhere', ...endpoints]);
    const tooFew = await consume(['--lane', 'us', ...endpoints, '--concurrency', '1']);
    // Assess
    assert.deepEqual(
      [noLane, noEndpoints, badUrl, unknown, tooFew].map((r) => r.code),
      [2, 2, 2, 2, 2],
    );
    assert.match(noLane.stderr, /--lane is required/);
    assert.match(noEndpoints.stderr, /--endpoints \(or env RATELANE_ENDPOINTS\) is required/);
    assert.match(badUrl.stderr, /--provider-url "ftp:\/\/x" is not an http\(s\) URL/);
    assert.match(unknown.stderr, /unknown lane "nowhere"; known lanes: /);
    assert.match(tooFew.stderr, /--concurrency/);
  });
});

describe('ratelane consume: following the lane', () => {
  it('applies the pause and the limit another consumer recorded to its own poller, once each; ended ones are ignored', async () => {
    // Prepare: a table with a pause and a limit, a local controller over a poller that records calls
    const now = Date.now();
    const store = new MemoryRateStateStore();
    await store.claimPause({ until: now + 60_000, reason: 'quota_exhausted', pausedAt: now }, now);
    await store.claimLimit({ share: 0.5, until: now + 30_000, reason: 'billing', limitedAt: now }, now);
    const calls: string[] = [];
    const poller = {
      pause: async () => void calls.push('pause'),
      resume: () => void calls.push('resume'),
      limit: (share: number) => void calls.push(`limit ${share}`),
    };
    const controller = new LocalLanePauseController(() => poller);
    // Act: followed twice
    await followLane(store, controller, now);
    await followLane(store, controller, now + 1);
    // Assess
    assert.deepEqual(calls, ['pause', 'limit 0.5']);
    assert.equal(controller.state.until?.getTime(), now + 60_000);
    assert.equal(controller.state.limitedUntil?.getTime(), now + 30_000);
    // ended records change nothing
    const fresh = new LocalLanePauseController(() => poller);
    await followLane(store, fresh, now + 120_000);
    assert.equal(fresh.state.paused, false);
    controller.dispose();
  });
});
