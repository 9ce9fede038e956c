/**
 * Names in an AWS account: the bucket name a lane gets by default, the account-qualified name it gets
 * when deployed, and the lane as deployed in an account. Re-exported by `lanes.ts`.
 */
import type { LaneConfig } from './lanes.js';

/** The bucket name a lane gets by default (and keeps locally): lane and region, no account. */
export function defaultBucketName(name: string, region: string): string {
  return `ratelane-${name}-source-${region}`;
}

/**
 * The bucket name of a lane deployed in `account`: bucket names are global across every AWS
 * account, so the deployed name carries the account id too (a staging and a production account can
 * both deploy the same lane, and nobody else's bucket can hold the name). At most 54 characters.
 */
export function accountBucketName(name: string, region: string, account: string): string {
  return `ratelane-${name}-source-${account}-${region}`;
}

/**
 * The lane as deployed in `account` (a 12-digit id, or the stack's account token): a bucket left at
 * its default name gets the account-qualified name ({@link accountBucketName}); a bucket named
 * explicitly in the config keeps that name. The stack, its consumer and a producer sending to AWS use
 * this; the local stack keeps the config's names.
 */
export function laneInAccount(lane: LaneConfig, account: string): LaneConfig {
  if (lane.resources.bucketName !== defaultBucketName(lane.name, lane.region)) return lane;
  return { ...lane, resources: { ...lane.resources, bucketName: accountBucketName(lane.name, lane.region, account) } };
}
