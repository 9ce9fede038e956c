/**
 * AWS cost of a simulated run, from the request and duration counts the models keep and the prices
 * in `lib/platform/aws-prices.ts`, per million jobs (the run's total × 1,000,000 / jobs).
 */
import { PRICES } from '../../lib/platform/aws-prices.js';

/** What a run consumed. */
export interface Usage {
  /** SQS billed requests (already counted in 64 KiB chunks). */
  sqsRequests: number;
  /** DynamoDB read request units. */
  dynamoReadUnits: number;
  /** DynamoDB write request units. */
  dynamoWriteUnits: number;
  /** S3 GET requests (the document read). */
  s3Gets: number;
  lambdaInvocations: number;
  /** Σ billed duration (ms, each invocation rounded up to 1 ms) × memory (GB), in GB-seconds. */
  lambdaGbSeconds: number;
  /** EventBridge Scheduler one-time schedules run (lane resumes). */
  schedules: number;
}

/** USD per million jobs, per service and in total. */
export interface CostPerMillion {
  sqs: number;
  dynamodb: number;
  s3: number;
  lambda: number;
  scheduler: number;
  total: number;
}

/** The cost of `usage` for a run of `jobs` jobs, scaled to one million jobs. */
export function costPerMillionJobs(usage: Usage, jobs: number): CostPerMillion {
  if (!(jobs > 0)) throw new RangeError(`jobs must be positive, got ${jobs}`);
  const scale = 1_000_000 / jobs;
  const sqs = usage.sqsRequests * PRICES.sqsRequest.usd * scale;
  const dynamodb = (usage.dynamoReadUnits * PRICES.dynamoReadRequestUnit.usd + usage.dynamoWriteUnits * PRICES.dynamoWriteRequestUnit.usd) * scale;
  const s3 = usage.s3Gets * PRICES.s3GetRequest.usd * scale;
  const lambda = (usage.lambdaInvocations * PRICES.lambdaRequest.usd + usage.lambdaGbSeconds * PRICES.lambdaArmGbSecond.usd) * scale;
  const scheduler = usage.schedules * PRICES.schedulerInvocation.usd * scale;
  return { sqs, dynamodb, s3, lambda, scheduler, total: sqs + dynamodb + s3 + lambda + scheduler };
}
