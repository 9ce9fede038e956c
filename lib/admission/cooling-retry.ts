/**
 * When jobs denied because their owners are cooling come back (see `acquireOps` in `pool-core.ts`).
 */

/** Billing and auth wait for a person, who may act any time: such a cooldown is re-checked, not waited out. */
export const RECHECKED: ReadonlySet<string> = new Set(['billing', 'auth']);

/**
 * When jobs denied for cooling owners come back: at the first rate or quota cooldown's end, and — only
 * while no owner with credit has a slot to offer — at the billing re-check.
 */
export class CoolingRetry {
  private ends = Infinity;
  private recheck = Infinity;

  /** `recheckAt`: the billing re-check (epoch ms) that bounds a return while no owner with credit offers a slot. */
  constructor(private readonly recheckAt: number) {}

  /** Notes one cooling owner. */
  note(until: number, reason: string): void {
    if (RECHECKED.has(reason)) this.recheck = Math.min(this.recheck, until, this.recheckAt);
    else this.ends = Math.min(this.ends, until);
  }

  /** The earliest return; `working`: an owner with credit has a slot, so a dead key's re-check does not cap it. */
  at(working: boolean): number {
    return working ? this.ends : Math.min(this.ends, this.recheck);
  }
}
