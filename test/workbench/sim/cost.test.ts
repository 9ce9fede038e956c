import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { costPerMillionJobs } from '../../../workbench/sim/cost.js';
import { PRICES } from '../../../lib/platform/aws-prices.js';
import { quotaBoundMs, SCENARIOS } from '../../../workbench/sim/scenarios.js';

describe('quotaBoundMs', () => {
  it('is jobs / combined limit, less the first minute’s burst, when no daily quota binds: 1M jobs at 40,000 RPM = 24 min', () => {
    // Act + Assess: 750 tokens a job; 40,000 go at once, the other 960,000 at 40,000 a minute
    assert.equal(quotaBoundMs(SCENARIOS.minute, 1_000_000, 750_000_000), 24 * 60_000);
  });

  it('takes the tokens limit when tokens bind', () => {
    // Act + Assess: 4 keys × 10M TPM = 40M tokens a minute; 2,000 tokens a job → 20,000 jobs a minute → 49 min after the burst
    assert.equal(quotaBoundMs(SCENARIOS.minute, 1_000_000, 2_000_000_000), 49 * 60_000);
  });

  it('waits for the daily reset when the day quota is spent, full buckets again at it: 19 min + wait to 00:00 + 4 min = 4 h 04 min', () => {
    // Act + Assess: 800,000 a day (a burst of 40,000, then 19 min); at 00:00 a burst of 40,000 and 4 min
    assert.equal(quotaBoundMs(SCENARIOS.day, 1_000_000, 750_000_000), (4 * 60 + 4) * 60_000);
  });
});

describe('costPerMillionJobs', () => {
  it('prices each service from prices.ts and scales to one million jobs', () => {
    // Act: half a million jobs' usage
    const cost = costPerMillionJobs(
      {
        sqsRequests: 3_000_000,
        dynamoReadUnits: 2_000_000,
        dynamoWriteUnits: 1_000_000,
        s3Gets: 4_000_000,
        lambdaInvocations: 100_000,
        lambdaGbSeconds: 150_000,
        schedules: 2,
      },
      500_000,
    );
    // Assess: twice each service's price
    const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);
    close(cost.sqs, 2 * 3 * 0.4);
    close(cost.dynamodb, 2 * (2 * 0.125 + 1 * 0.625));
    close(cost.s3, 2 * 4 * 0.4);
    close(cost.lambda, 2 * (0.1 * 0.2 + 150_000 * 0.0000133334));
    close(cost.scheduler, 2 * 2 * PRICES.schedulerInvocation.usd);
    close(cost.total, cost.sqs + cost.dynamodb + cost.s3 + cost.lambda + cost.scheduler);
  });

  it('keeps a source for every price', () => {
    // Act + Assess
    for (const [id, price] of Object.entries(PRICES)) {
      assert.ok(price.usd > 0, id);
      assert.match(price.source, /https?:\/\//, id);
    }
  });
});
