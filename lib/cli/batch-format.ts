/**
 * The readable summaries of `ratelane batch` (stdout without `--json`): ids, states, counts, reasons and
 * source ids, never document text and never a key.
 */
import type { CancelBatchReport } from '../lanes/batch/cancel.js';
import type { RedriveBatchReport } from '../lanes/batch/redrive.js';
import type { BatchStatusReport } from '../lanes/batch/status.js';
import type { SubmitBatchReport } from '../lanes/batch/submit.js';
import { ITEM_STATES } from '../store/manifest-model.js';

/** Most unresolved or rejected items listed one per line (`--json` has them all). */
const MAX_LISTED = 50;

function listed<T>(items: readonly T[], line: (item: T) => string): string[] {
  const lines = items.slice(0, MAX_LISTED).map(line);
  if (items.length > MAX_LISTED) lines.push(`  ... and ${items.length - MAX_LISTED} more (--json lists all)`);
  return lines;
}

/** The summary of `ratelane batch submit`. */
export function formatSubmit(report: SubmitBatchReport, lane: string): string {
  const lines = [
    report.batchId === null
      ? `no batch created in lane ${lane}: every document was rejected`
      : `batch ${report.batchId} in lane ${lane}: ${report.items} item(s) submitted in ${report.parts.length} part(s)${report.rejected.length ? `, ${report.rejected.length} document(s) rejected` : ''}`,
  ];
  for (const p of report.parts) {
    lines.push(
      `  part ${p.partId}  ${p.state}${p.providerJobId ? ` ${p.providerJobId}` : ''} (${p.items} items)${p.nextSubmitAt ? `, submitted again after ${p.nextSubmitAt}` : ''}`,
    );
  }
  lines.push(...listed(report.rejected, (r) => `  REJECTED #${r.index}${r.sourceId ? ` ${r.sourceId}` : ''}: ${r.reason}: ${r.detail}`));
  if (report.batchId !== null) lines.push(`next: ratelane batch status ${report.batchId} --region ${lane}`);
  return `${lines.join('\n')}\n`;
}

/** The summary of `ratelane batch status`. */
export function formatStatus(report: BatchStatusReport): string {
  const o = report.outcome;
  const counts = ITEM_STATES.filter((s) => report.counts[s] > 0)
    .map((s) => `${s} ${report.counts[s]}`)
    .join(', ');
  const lines = [
    `batch ${report.batchId} (lane ${report.lane}): ${report.state}, created ${report.createdAt} (${report.ageSeconds} s ago), ${report.items} item(s)`,
    `  outcome     committed ${o.committed}, needs review ${o.needsReview}, rejected ${o.rejected}, unresolved ${o.unresolved}, waiting ${o.waiting}`,
    `  items       ${counts || 'none'}`,
  ];
  for (const p of report.providerJobs) {
    lines.push(
      `  part ${p.partId}   ${p.state}${p.providerJobId ? ` ${p.providerJobId}` : ''} (${p.items} items)${p.nextSubmitAt ? `, submitted again after ${p.nextSubmitAt}` : ''}`,
    );
  }
  if (report.unresolved.length > 0) {
    lines.push(`  unresolved (ratelane batch redrive ${report.batchId} --region ${report.lane} hands them to the queue lane):`);
    lines.push(...listed(report.unresolved, (u) => `    ${u.itemId} ${u.sourceId}: ${u.reason}`));
  }
  return `${lines.join('\n')}\n`;
}

/** The summary of `ratelane batch redrive`. */
export function formatRedrive(report: RedriveBatchReport, lane: string): string {
  const lines = [
    `batch ${report.batchId} (lane ${lane}): ${report.redriven} unresolved item(s) handed to the queue lane${report.failed.length ? `, ${report.failed.length} could not be sent` : ''}`,
  ];
  lines.push(...listed(report.failed, (f) => `  FAILED ${f.itemId}: ${f.errorName} (still unresolved; redrive again)`));
  if (report.redriven === 0 && report.failed.length === 0) lines.push('  nothing to redrive: no unresolved item whose provider job has ended');
  return `${lines.join('\n')}\n`;
}

/** The summary of `ratelane batch cancel`. */
export function formatCancel(report: CancelBatchReport & { reconcileError?: string }, lane: string): string {
  if (!report.changed) return `batch ${report.batchId} (lane ${lane}) is already ${report.state}: nothing to cancel\n`;
  const lines = [`batch ${report.batchId} (lane ${lane}): ${report.state}`];
  for (const c of report.cancelRequested) lines.push(`  part ${c.partId}  asked to stop (${c.providerJobId}); what it answered is kept`);
  for (const c of report.cancelledBeforeSubmit) lines.push(`  part ${c.partId}  cancelled before it was submitted (${c.items} item(s) unresolved)`);
  for (const f of report.failed) lines.push(`  FAILED part ${f.partId}: ${f.errorName} (cancel again to retry)`);
  if (report.reconcileError) lines.push(`  the reconcile pass after the cancel failed: ${report.reconcileError} (the reconciler tries again)`);
  if (report.state === 'cancelling') lines.push('  the reconciler reads what the stopped jobs answered, then moves the batch to cancelled');
  return `${lines.join('\n')}\n`;
}
