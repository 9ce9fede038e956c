/**
 * The first model call's admission, taken beside the document read instead of after it: the take and
 * the read are a record's two round trips before its call, and neither needs the other. The take is
 * made for the tokens the job declares plus its prompt's own (known per prompt version); the first
 * call uses it when the prompt built from the text the read returned needs no more than that. A job
 * whose declared size was short of its text (an untrusted body) has its early grant given back and
 * takes again for what it really needs; a record that ends before its call gives the grant back.
 */
import type { KeyAdmission } from '../admission/keys.js';
import { estimateTokens, type Job } from '../contract/job.js';
import { getExtractionPrompt } from '../contract/schemas/registry.js';
import { bookingWindowMs } from './budget.js';
import type { JobRun } from './context.js';

/** Tokens of each prompt version's own text (the prompt built around an empty document), by `schema/prompt`. */
const promptOwnTokens = new Map<string, number>();

/**
 * The tokens the first call of `job` is expected to take before its text is read: what the job
 * declares for its document, plus its prompt's own. Never less than what the call is priced at once
 * the prompt is built from a document of the declared size (the estimate rounds each part up).
 */
export function declaredCallTokens(job: Pick<Job, 'schemaVersion' | 'promptVersion' | 'input'>): number {
  const id = `${job.schemaVersion}/${job.promptVersion}`;
  let own = promptOwnTokens.get(id);
  if (own === undefined) {
    const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion);
    own = prompt
      ? estimateTokens(
          prompt
            .buildMessages('')
            .map((m) => m.content)
            .join('\n'),
        )
      : 0;
    promptOwnTokens.set(id, own);
  }
  return job.input.estimatedTokens + own;
}

/** Starts the first call's take for the run (its answer is kept on the run until {@link useEarlyAdmission}). */
export function takeEarly(run: JobRun): void {
  const estimatedTokens = declaredCallTokens(run.job);
  const answer = run.deps.keys.acquire({
    estimatedTokens,
    bookWithinMs: bookingWindowMs(run.deps.lane, run.delivery, run.deps.now().getTime()),
  });
  answer.catch(() => undefined);
  run.early = { estimatedTokens, answer };
}

/**
 * The early take's answer for a call priced at `estimatedTokens`, or `undefined` when there is none or
 * it was made for fewer tokens (its grant is given back then, and the caller takes again). Throws what
 * the take threw.
 */
export async function useEarlyAdmission(run: JobRun, estimatedTokens: number): Promise<KeyAdmission | undefined> {
  const early = run.early;
  if (!early) return undefined;
  run.early = undefined;
  if (estimatedTokens <= early.estimatedTokens) return early.answer;
  await giveBack(early.answer);
  return undefined;
}

/** Gives the early take's grant back when the run ends before its first call (nothing to do without one). */
export async function releaseEarlyAdmission(run: JobRun): Promise<void> {
  const early = run.early;
  if (!early) return;
  run.early = undefined;
  await giveBack(early.answer);
}

/** A grant that no call used is settled as "no answer": its owner's first call, if it was that, is released. */
async function giveBack(answer: Promise<KeyAdmission>): Promise<void> {
  const admission = await answer.catch(() => undefined);
  if (admission?.admitted) await admission.settle(null);
}
