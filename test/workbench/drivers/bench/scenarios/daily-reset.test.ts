/**
 * `daily-reset`'s day: the fake provider's fixed day starts at `dayStartMs`
 * (workbench/fake-provider/limits.ts), and the consumer's admission, told the reset as
 * `dailyResetOffsetMs = dayStartMs % dayMs` (as the bench does), resets at the same moments.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configuredDailyReset } from '../../../../../lib/admission/bucket/token-bucket.js';
import { bucketLimitsFor, admissionSettings } from '../../../../../lib/admission/config/settings.js';
import { benchLanes } from '../../../../../workbench/drivers/bench/strategies.js';
import { startFakeProvider } from '../../../../../workbench/fake-provider/index.js';
import { QuotaLedger } from '../../../../../workbench/fake-provider/limits.js';

const DAY_MS = 36_000;
const DAY_START = 1_700_000_012_345;

/** A ledger of 2 requests per fixed day starting at `dayStartMs`, built at `now`. */
function ledger(now: number, dayStartMs?: number): QuotaLedger {
  return new QuotaLedger({ requestsPerDay: 2 }, { minuteMs: 3000, dayMs: DAY_MS, dailyWindow: 'fixed', dayStartMs }, now);
}

/** Spends the day's 2 requests at `at` and returns how long the third must wait. */
function waitAfterSpendingTheDay(l: QuotaLedger, at: number): number | null {
  l.spendRequest('o', 1, at);
  l.spendRequest('o', 1, at);
  const refused = l.check('o', 1, at);
  return refused.admitted ? 0 : refused.waitMs;
}

describe('fake provider: where the fixed day starts', () => {
  it('starts at dayStartMs, not at construction: the reset comes a day after it', () => {
    // Prepare: built 5 s after the day began
    const l = ledger(DAY_START + 5000, DAY_START);
    // Act
    const wait = waitAfterSpendingTheDay(l, DAY_START + 10_000);
    // Assess
    assert.equal(wait, DAY_MS - 10_000);
    assert.equal(l.check('o', 1, DAY_START + DAY_MS).admitted, true);
  });

  it('starts at construction without dayStartMs, or when dayStartMs is later than now', () => {
    // Act
    const plain = waitAfterSpendingTheDay(ledger(DAY_START), DAY_START + 10_000);
    const future = waitAfterSpendingTheDay(ledger(DAY_START, DAY_START + 60_000), DAY_START + 10_000);
    // Assess
    assert.equal(plain, DAY_MS - 10_000);
    assert.equal(future, DAY_MS - 10_000);
  });

  it('refuses a dayStartMs that is not a finite number', async () => {
    // Act + Assess
    await assert.rejects(startFakeProvider({ keys: [{ key: 'k' }], extract: () => ({}), dayStartMs: Number.NaN }), /dayStartMs must be a finite number/);
  });

  it("agrees with the consumer's admission when told dailyResetOffsetMs = dayStartMs % dayMs", () => {
    // Prepare: the bench's lane with a daily quota, and the admission settings the bench gives (c)
    const lane = Object.values(benchLanes({ keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: 3000, providerDaily: 48 }, 't'))[0]!;
    const limits = bucketLimitsFor(lane, admissionSettings({ windowMs: 3000, dayMs: DAY_MS, dailyResetOffsetMs: DAY_START % DAY_MS }));
    // Act
    const resets = [0, 1, DAY_MS - 1, DAY_MS, DAY_MS + 5].map((after) => configuredDailyReset(limits, DAY_START + after));
    // Assess
    assert.equal(lane.provider.limits.requestsPerDay, 48);
    assert.deepEqual(resets, [DAY_START + DAY_MS, DAY_START + DAY_MS, DAY_START + DAY_MS, DAY_START + 2 * DAY_MS, DAY_START + 2 * DAY_MS]);
  });
});
