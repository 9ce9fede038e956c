import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LANES, type LaneConfig } from '../../../lib/config/lanes.js';
import { admissionWaitMs, bookingWindowAtStartMs, bookingWindowMs, MIN_ADMISSION_WAIT_MS, settleMarginMs } from '../../../lib/extraction/budget.js';
import { RESEND_COST_USD, waitWorthMs } from '../../../lib/extraction/wait-cost.js';
import { startInvocation } from '../../../lib/lanes/queue/invocation.js';
import { PRICES } from '../../../lib/platform/aws-prices.js';

const lane = (consumer: Partial<LaneConfig['consumer']>): LaneConfig => ({ ...DEFAULT_LANES.us!, consumer: { ...DEFAULT_LANES.us!.consumer, ...consumer } });

describe('the in-process wait for a booked slot is bounded by what a re-send costs', () => {
  it('prices a re-send at three SQS requests, three DynamoDB writes, one DynamoDB read and one S3 GET', () => {
    // Act + Assess
    const expected = 3 * PRICES.sqsRequest.usd + 3 * PRICES.dynamoWriteRequestUnit.usd + PRICES.dynamoReadRequestUnit.usd + PRICES.s3GetRequest.usd;
    assert.equal(RESEND_COST_USD, expected);
  });

  it('waits as long as the billed duration costs no more than a re-send: half as long with twice the memory', () => {
    // Act
    const at512 = waitWorthMs(512);
    // Assess: 0.5 GB x $0.0000133334 per GB-s against $3.60 per million re-sends
    assert.equal(at512, 539);
    assert.ok(Math.abs(waitWorthMs(1024) - at512 / 2) <= 1);
    // (each bound is floored to whole ms: four times the 512 MB one may be up to 4 ms short)
    assert.ok(Math.abs(waitWorthMs(128) - at512 * 4) <= 4);
  });

  it('keeps at least two DelaySeconds steps, at most half the function timeout', () => {
    // Act + Assess: the default lane (60 s, 512 MB) waits 2 s, not 30 s
    assert.equal(admissionWaitMs(DEFAULT_LANES.us!), MIN_ADMISSION_WAIT_MS);
    assert.equal(bookingWindowAtStartMs(DEFAULT_LANES.us!), MIN_ADMISSION_WAIT_MS);
    // a small function waits longer for the same price
    assert.equal(admissionWaitMs(lane({ memoryMb: 128 })), waitWorthMs(128));
    // a 3 s function: half its timeout
    assert.equal(admissionWaitMs(lane({ timeoutSeconds: 3 })), 1500);
  });

  it("is, at an invocation's start, the window its first record books within: the time kept to return and to settle left out", () => {
    // (the bench's lane at its 3 s minute: a 3 s function, a 1.25 s provider timeout)
    const bench: LaneConfig = { ...lane({ timeoutSeconds: 3 }), provider: { ...DEFAULT_LANES.us!.provider, timeoutMs: 1250 } };
    for (const config of [DEFAULT_LANES.us!, bench]) {
      // Prepare: an invocation of the function's whole timeout, its work stopping the lane's settle margin before its deadline
      const now = 1_000_000;
      const invocation = startInvocation({ getRemainingTimeInMillis: () => config.consumer.timeoutSeconds * 1000 }, () => now, settleMarginMs(config));
      try {
        // Act: the window of a record delivered then (as the queue lane gives it: its work's end and the in-process wait)
        const first = bookingWindowMs(config, { admissionWaitMs: admissionWaitMs(config), deadlineAt: invocation.workUntil }, now);
        // Assess: a 3 s function keeps 300 ms to return and 300 ms to settle: 3000 - 600 - 1250 = 1150 ms
        assert.equal(bookingWindowAtStartMs(config), first, `${config.consumer.timeoutSeconds} s function`);
      } finally {
        invocation.dispose();
      }
    }
    assert.equal(bookingWindowAtStartMs(bench), 1150);
  });
});
