/**
 * The cooldowns a consumer read are used as they are for `cooldownCacheMs`; for half as long again a
 * take still uses them while a fresh read runs beside it (no take waits for that read), and the read
 * lands for the takes after it; older than that, a take waits for a read.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyRef } from '../../../../lib/admission/model/cooldowns.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { KeyAdmission, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import { admissionSettings } from '../../../../lib/admission/config/settings.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';

const T0 = Date.parse('2026-03-02T20:00:00.000Z');

/** A store whose cooldown reads wait for `open()` while `hold()` is on, counting them. */
class GatedStore extends MemoryRateStateStore {
  cooldownReads = 0;
  private gate: Promise<void> | undefined;
  private release: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  open(): void {
    this.release?.();
    this.gate = undefined;
  }

  override async readCooldowns(keys: readonly KeyRef[]) {
    this.cooldownReads++;
    const gate = this.gate;
    if (gate) await gate;
    return super.readCooldowns(keys);
  }
}

/** `promise`'s value, or a failure when it has not settled within `ms`. */
async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const keyOf = (answer: KeyAdmission): string => (answer.admitted ? answer.key.id : 'denied');

describe('SharedKeyPool: cooldowns read ahead', () => {
  const keys: ProviderKey[] = [
    { id: 'k1', quotaOwner: 'o1', secret: 'sk-1' },
    { id: 'k2', quotaOwner: 'o2', secret: 'sk-2' },
  ];
  const settings = admissionSettings({ outputTokenEstimate: 100, probeFirstCalls: false, cooldownCacheMs: 1000 });
  const limits = { requestsPerWindow: 50, tokensPerWindow: 1e9, windowMs: 60_000, requestsPerDay: 1e6, dayMs: 86_400_000 };

  it('takes with the cooldowns it has while a read runs beside it, learns from that read, and waits for a read once they are too old', async () => {
    // Prepare: one read at T0, two grants (k1, k2: the round robin is back at k1)
    const store = new GatedStore();
    const clock = { now: T0 };
    const pool = new SharedKeyPool({ keys, store, limits, settings, now: () => clock.now });
    assert.deepEqual([keyOf(await pool.acquire({ estimatedTokens: 10 })), keyOf(await pool.acquire({ estimatedTokens: 10 }))], ['k1', 'k2']);
    // Another consumer cools k1 in the table.
    await store.putCooldown({ scope: 'key', id: 'k1', reason: 'rate_limit', until: T0 + 60_000 });
    // Act 1: 1.2 s later, with the read held, a take
    clock.now = T0 + 1200;
    store.hold();
    const beside = await within(500, pool.acquire({ estimatedTokens: 10 }), 'the take beside the read');
    store.open();
    // Assess 1: it did not wait for the read it started; it took k1, as its cooldowns said
    assert.equal(store.cooldownReads, 2);
    assert.equal(keyOf(beside), 'k1');
    // Act 2: the read lands; two more takes
    await new Promise((resolve) => setImmediate(resolve));
    clock.now = T0 + 1300;
    const after = [keyOf(await pool.acquire({ estimatedTokens: 10 })), keyOf(await pool.acquire({ estimatedTokens: 10 }))];
    // Assess 2: k1 is known cooling, without another read
    assert.deepEqual(after, ['k2', 'k2']);
    assert.equal(store.cooldownReads, 2);
    // Act 3: 1.6 s after that read began (more than 1.5x the cache's life), with the read held
    clock.now = T0 + 2800;
    store.hold();
    let answered = false;
    const waiting = pool.acquire({ estimatedTokens: 10 }).then((answer) => {
      answered = true;
      return answer;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const answeredWhileHeld = answered;
    store.open();
    const late = await waiting;
    // Assess 3: that take waited for the read
    assert.equal(answeredWhileHeld, false);
    assert.equal(store.cooldownReads, 3);
    assert.equal(keyOf(late), 'k2');
  });
});
