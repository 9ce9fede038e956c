/**
 * How the lane's stores name a source without holding its id as a key: `src#<sha256 of the source id>`,
 * bounded in size whatever the source id is. The ledger indexes job claims by it (`bySource`) and keys a
 * source's erasure tombstone by it.
 */
import { createHash } from 'node:crypto';

/** The key of a source in the lane's stores. */
export function sourceKeyOf(sourceId: string): string {
  return `src#${createHash('sha256').update(sourceId, 'utf8').digest('hex')}`;
}
