/**
 * The extraction core every lane shares, as one pipeline (`pipeline.ts`): intake → admit → call →
 * validate → commit once. It never imports a lane: the queue lane (`lib/lanes/queue`) drives it for
 * each SQS record, the live lane (`lib/lanes/live`) for each request, and carries out what the outcome
 * leaves to it. This module names what the lanes use.
 */
export { count, ledgerBase, log, newJobRun, runLogFields, type Delivery, type ExtractionDeps, type JobRun, type ModelTime } from './context.js';
export type { ExtractionOutcome, LaneOut } from './outcome.js';
export { extract, extractRecord, intake } from './pipeline.js';
export { laneMayCarryOut } from './verify.js';
