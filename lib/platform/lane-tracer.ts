/**
 * The lane functions' X-Ray Tracer, apart from `tracing.ts`: loading the Powertools Tracer loads the X-Ray
 * SDK, whose context tracking (`cls-hooked`) hooks every promise of the process (in a loop of awaited
 * promises, about ten times their cost). Only the functions' entry points (`from-environment.ts`) import
 * this module, so the handlers, the local stack and the tests run without it.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { AwsClients } from './clients.js';

/**
 * The Tracer of a lane function named `serviceName`. Powertools enables it only inside Lambda (where the
 * function's active tracing gives it a segment); locally it does nothing.
 */
export function createLaneTracer(serviceName: string): Tracer {
  return new Tracer({ serviceName });
}

/** `clients` with their calls traced as subsegments (SQS, S3, DynamoDB). Returns them. */
export function traceClients<C extends Pick<AwsClients, 'sqs' | 's3' | 'dynamodb'>>(tracer: Tracer, clients: C): C {
  tracer.captureAWSv3Client(clients.sqs);
  tracer.captureAWSv3Client(clients.s3);
  tracer.captureAWSv3Client(clients.dynamodb);
  return clients;
}
