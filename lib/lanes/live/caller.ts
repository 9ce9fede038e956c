/**
 * Who calls the live API, and what they may read. Every route is authorized by API Gateway's IAM
 * authorizer (SigV4), which puts the verified caller on `requestContext.authorizer.iam.userArn`; the
 * caller's **tenant** is that principal as `tenantOfPrincipal` names it (sessions of one role are one
 * tenant).
 *
 * A job submitted through the API belongs to its caller's tenant; reading it (`GET`) is allowed to that
 * tenant and to the principals of the lane's `live.readers` (a lane-wide read, for operators' tools),
 * and to nobody else: to them it is unknown (404), as a job never seen. Erasing its source (`DELETE`,
 * `erase.ts`) is its tenant's alone.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { tenantOfPrincipal } from '../../contract/job.js';
import type { StatusReader } from '../../store/job-status.js';

/** The caller's tenant, from the IAM authorizer's verified principal; `undefined` when the event has none. */
export function callerTenant(event: Pick<APIGatewayProxyEventV2, 'requestContext'>): string | undefined {
  const context = event.requestContext as { authorizer?: { iam?: { userArn?: unknown } } } | undefined;
  const arn = context?.authorizer?.iam?.userArn;
  return typeof arn === 'string' && arn.length > 0 ? tenantOfPrincipal(arn) : undefined;
}

/** What `tenant` may read: jobs of its own tenant, or every job of the lane when it is one of `readers`. */
export function readerFor(tenant: string, readers: readonly string[] = []): StatusReader {
  const laneWide = readers.some((reader) => tenantOfPrincipal(reader) === tenant);
  return { mayRead: (owner) => laneWide || owner === tenant };
}

/**
 * {@link readerFor} that also notes whose job it was asked about: a route that acts on a job (cancel, erase)
 * reads it exactly as `GET` does, then acts only for its owner (`ownsIt()`).
 */
export function ownerNotingReader(tenant: string, readers: readonly string[] = []): StatusReader & { ownsIt(): boolean } {
  const asGet = readerFor(tenant, readers);
  let owner: string | undefined;
  return {
    mayRead: (of) => {
      owner = of;
      return asGet.mayRead(of);
    },
    ownsIt: () => owner === tenant,
  };
}
