/**
 * Test access to the shared local services that `npm test` (test/run.ts) started for this run.
 */
import { randomBytes } from 'node:crypto';
import type { ServiceEndpoints } from '../../lib/platform/clients.js';

/** The endpoints of the run's DynamoDB Local and fauxqs. Throws when the file is run outside `npm test`. */
export function testEndpoints(): ServiceEndpoints {
  const raw = process.env.RATELANE_TEST_ENDPOINTS;
  if (!raw) throw new Error('RATELANE_TEST_ENDPOINTS is not set: run tests with `npm test [-- <file>]`');
  return JSON.parse(raw) as ServiceEndpoints;
}

/** A short unique suffix so each test's queues, buckets and tables never collide with another's. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** A lane's resource names, all unique to one test (queues, bucket, tables). */
export function uniqueLaneResources(): {
  queueName: string;
  dlqName: string;
  bucketName: string;
  resultsTable: string;
  ledgerTable: string;
  rateStateTable: string;
} {
  return {
    queueName: uniqueName('q'),
    dlqName: uniqueName('dlq'),
    bucketName: uniqueName('b'),
    resultsTable: uniqueName('r'),
    ledgerTable: uniqueName('l'),
    rateStateTable: uniqueName('s'),
  };
}
