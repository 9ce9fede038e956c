/**
 * What a record's in-process wait for a booked admission slot costs against a re-send. The wait is
 * billed as the invocation's duration (Lambda GB-seconds); a job re-sent for its slot costs the
 * requests of another round (SQS, DynamoDB, S3). A record waits only as long as that wait costs its
 * function less than a re-send would: `npm run sim` showed a fleet holding more records than its
 * quota starts paying more for waiting (up to half a 60 s function timeout) than it saved in re-sends
 * (docs/benchmarks/simulator.md). Pure.
 */
import { PRICES } from '../platform/aws-prices.js';

/**
 * The requests one re-send of a job adds: the `SendMessage`, and the receive and delete of the message
 * that comes back (counted whole: a batch shares them, a lone record does not); the deferral's ledger
 * line, the job id's claim at the next receive and the take made again; the document and its source's
 * erasure tombstone read again.
 */
const RESEND_REQUESTS = { sqs: 3, dynamoWrites: 3, dynamoReads: 1, s3Gets: 1 } as const;

/** What one re-send of a job costs in AWS requests (USD). */
export const RESEND_COST_USD =
  RESEND_REQUESTS.sqs * PRICES.sqsRequest.usd +
  RESEND_REQUESTS.dynamoWrites * PRICES.dynamoWriteRequestUnit.usd +
  RESEND_REQUESTS.dynamoReads * PRICES.dynamoReadRequestUnit.usd +
  RESEND_REQUESTS.s3Gets * PRICES.s3GetRequest.usd;

/**
 * The longest in-process wait (ms) that costs a function of `memoryMb` (arm64) no more than one
 * re-send: about 540 ms at 512 MB, 2.2 s at 128 MB. A record whose invocation would run as long anyway
 * (its batch waits for a later slot) waits for free; this bound is for the record that waits alone.
 */
export function waitWorthMs(memoryMb: number): number {
  return Math.floor((RESEND_COST_USD / ((memoryMb / 1024) * PRICES.lambdaArmGbSecond.usd)) * 1000);
}
