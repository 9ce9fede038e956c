/**
 * Who may state a job's tenant. A queue message is input from outside: anyone allowed to send to the
 * lane's queue could name any tenant, and the tenant decides who reads the result. SQS stamps every
 * message with its sender (`SenderId`: an IAM role's unique id and session, a user's unique id, or an
 * account id) and no sender can forge it, so the lane believes a stated tenant only from
 * - the lane's own senders (its functions re-send, hand over and repair jobs whose tenant their
 *   first sender was allowed to state), or
 * - a producer the lane's config grants that tenant (or every tenant, `*`).
 * A job that states no tenant needs no grant: only the lane's readers read it.
 */

/**
 * A producer's rights: its IAM unique id, the tenants it may state (`*`: any) and the priority classes
 * beyond `bulk` (`urgent`).
 */
export interface TenantGrant {
  /** The sender's IAM unique id (`AROA…` for a role, `AIDA…` for a user) or a 12-digit account id. */
  senderId: string;
  tenants?: readonly string[] | undefined;
  priorities?: readonly string[] | undefined;
}

/** An SQS sender's principal as {@link senderPrincipalId} gives it: a role's (`AROA…`) or user's (`AIDA…`) IAM unique id, or an account id. */
export const SENDER_PRINCIPAL_PATTERN = /^(AROA|AIDA)[A-Z0-9]{12,124}$|^\d{12}$/;

/** The tenant every producer with this grant may state. */
export const ANY_TENANT = '*';

/**
 * The principal part of an SQS `SenderId`: a role's unique id without its session name
 * (`AROAEXAMPLE:session` → `AROAEXAMPLE`), a user's unique id or an account id as they are.
 */
export function senderPrincipalId(senderId: string): string {
  const colon = senderId.indexOf(':');
  return colon < 0 ? senderId : senderId.slice(0, colon);
}

/**
 * Whether the sender may state `tenant` for a job: it is one of `laneSenders`, or a grant of `grants`
 * names it with the tenant or `*`. A message with no sender may state none.
 */
export function mayStateTenant(input: {
  tenant: string;
  senderId: string | undefined;
  laneSenders: readonly string[];
  grants: readonly TenantGrant[];
}): boolean {
  if (input.senderId === undefined || input.senderId === '') return false;
  const principal = senderPrincipalId(input.senderId);
  if (input.laneSenders.includes(principal)) return true;
  return input.grants.some((grant) => grant.senderId === principal && (grant.tenants?.includes(ANY_TENANT) || grant.tenants?.includes(input.tenant)));
}

/**
 * Whether the sender may state priority class `priority`: `bulk` anyone; another class one of
 * `laneSenders` (a re-send keeps the class its first sender was allowed), or a grant naming it.
 */
export function mayStatePriority(input: {
  priority: string;
  senderId: string | undefined;
  laneSenders: readonly string[];
  grants: readonly TenantGrant[];
}): boolean {
  if (input.priority === 'bulk') return true;
  if (input.senderId === undefined || input.senderId === '') return false;
  const principal = senderPrincipalId(input.senderId);
  if (input.laneSenders.includes(principal)) return true;
  return input.grants.some((grant) => grant.senderId === principal && grant.priorities?.includes(input.priority) === true);
}
