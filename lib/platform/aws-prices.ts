/**
 * AWS prices the simulator's cost figures and the consumer's in-process wait bound use (`workbench/sim/cost.ts`,
 * `lib/extraction/wait-cost.ts`): the one place to change them. US East (N. Virginia), on-demand list
 * prices in USD, without free tiers (the figures are marginal cost per million jobs) and without
 * volume tiers (the first tier applies at this scale).
 *
 * Taken in 2026 from stored copies of the AWS pricing pages named with each price, not from the live
 * pages: re-check each against its AWS page before quoting.
 */

/** One AWS price, with where it comes from. */
export interface Price {
  /** USD per `unit`. */
  usd: number;
  unit: string;
  /** Where the number comes from. */
  source: string;
  /** `published` when read from a page quoting AWS's price; `assumption` when not confirmed. */
  status: 'published' | 'assumption';
  note?: string;
}

/** The region the prices are for. */
export const PRICES_REGION = 'us-east-1';
/** When the prices were last checked, and against what. */
export const PRICES_CHECKED = '2026-03 (stored pages; see each source)';

/** Every price the cost figures use (see `workbench/sim/cost.ts`) and the wait bound (`lib/extraction/wait-cost.ts`). */
export const PRICES = {
  sqsRequest: {
    usd: 0.4 / 1_000_000,
    unit: 'SQS standard-queue request (each started 64 KiB of payload is one request)',
    source:
      'https://aws.amazon.com/sqs/pricing/ — $0.40 per million standard requests (first 100 billion/month), 64 KB chunk rule; ' +
      'as quoted for us-east-1 by cloudburn.io/blog/amazon-sqs-pricing (March 2026) and unanswered.io',
    status: 'published',
  },
  dynamoWriteRequestUnit: {
    usd: 0.625 / 1_000_000,
    unit: 'DynamoDB on-demand write request unit (standard write of an item up to 1 KB)',
    source:
      'https://aws.amazon.com/dynamodb/pricing/on-demand/ (unit definitions) — $0.625 per million WRU in US East, ' +
      'as quoted by airbyte.com/data-engineering-resources/dynamodb-pricing (after the November 2024 on-demand price cut)',
    status: 'published',
    note: 'a failed conditional write still consumes write units',
  },
  dynamoReadRequestUnit: {
    usd: 0.125 / 1_000_000,
    unit: 'DynamoDB on-demand read request unit (one strongly consistent read up to 4 KB)',
    source:
      'https://aws.amazon.com/dynamodb/pricing/on-demand/ (unit definitions) — $0.125 per million RRU in US East, ' +
      'as quoted by airbyte.com/data-engineering-resources/dynamodb-pricing',
    status: 'published',
    note: 'some stored pages still show the pre-November-2024 $0.25/M; the lower current figure is used',
  },
  s3GetRequest: {
    usd: 0.4 / 1_000_000,
    unit: 'S3 Standard GET request (the document read of each receive)',
    source:
      'https://aws.amazon.com/s3/pricing/ — GET, SELECT and all other requests $0.0004 per 1,000 at S3 Standard, as quoted by c3x.dev/blog/s3-request-fees-explained',
    status: 'published',
  },
  lambdaRequest: {
    usd: 0.2 / 1_000_000,
    unit: 'Lambda invocation',
    source: 'https://aws.amazon.com/lambda/pricing/ — $0.20 per 1M requests, as quoted by cloudchipr.com/blog/aws-lambda-pricing',
    status: 'published',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: 'Lambda arm64 GB-second (first 7.5 billion GB-s/month)',
    source: 'https://aws.amazon.com/lambda/pricing/ — Arm $0.0000133334 per GB-s, US East (N. Virginia), as quoted by cloudchipr.com/blog/aws-lambda-pricing',
    status: 'published',
  },
  schedulerInvocation: {
    usd: 1.0 / 1_000_000,
    unit: 'EventBridge Scheduler scheduled invocation',
    source:
      'https://aws.amazon.com/eventbridge/pricing/ — $1.00 per million scheduled invocations after 14M free/month is the us-east-1 figure ' +
      'as remembered; the AWS price-list export seen (huggingface.co/datasets/labofsahil/aws-pricing-dataset, AWSEvents.csv, effective 2024-10-01) shows $1.25/M for Tokyo',
    status: 'assumption',
  },
} as const satisfies Record<string, Price>;
