/**
 * The extraction core every lane shares: intake (parse, registry, gate, duplicate check, document
 * read, input checks) → extract (admission, model call, validation, one repair) → an outcome → commit
 * once. It never imports a lane: the queue lane (`lib/lanes/queue`) drives it for each SQS record and
 * carries out what the outcome leaves to it.
 */
import type { Delivery, ExtractionDeps, JobRun, ModelTime } from './context.js';
import { extract } from './extract.js';
import { intake } from './intake.js';
import type { ExtractionOutcome } from './outcome.js';

export {
  count,
  deliveryLogFields,
  ledgerBase,
  log,
  newJobRun,
  runLogFields,
  type Delivery,
  type ExtractionDeps,
  type JobRun,
  type ModelCallTiming,
  type ModelTime,
} from './context.js';
export { InternalError } from './errors.js';
export { failureVerdict, type FailureStep, type FailureVerdict } from './failures.js';
export { extract } from './extract.js';
export { intake, type IntakeResult } from './intake.js';
export * from './outcome.js';
export { validateOutput, type ValidatableSchema, type ValidationResult } from './validate.js';
export { laneMayCarryOut } from './verify.js';

/** What the core made of one message body: the outcome, and the job's run once its body parsed and its claims held. */
export interface RecordOutcome {
  outcome: ExtractionOutcome;
  run?: JobRun | undefined;
}

/**
 * Runs one message body through the whole core: intake, then extraction and the commit. Terminal
 * outcomes come back settled; a deferral or a real failure is the driving lane's to carry out, after
 * `laneMayCarryOut` on the run (the job's id claimed: the lane writes under it).
 *
 * @param model where the record's model time accumulates (for timing it)
 */
export async function extractRecord(body: string, delivery: Delivery, deps: ExtractionDeps, model?: ModelTime): Promise<RecordOutcome> {
  const intook = await intake(body, delivery, deps, model);
  if (intook.type === 'settled') return intook;
  return { outcome: await extract(intook.run, intook.text), run: intook.run };
}
