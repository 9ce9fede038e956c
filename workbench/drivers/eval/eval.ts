/**
 * The evaluation driver behind `npm run eval`: runs the candidate release (and the baseline release,
 * when asked) through the chosen lane, compares them field by field, prints the report, writes the
 * JSON and HTML forms, and says whether the gate passed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CommandIo } from '../../../lib/cli/command.js';
import { getRelease, releaseProblems, type Release } from '../../../lib/contract/releases.js';
import { formatEvalReport } from './format.js';
import { compareWithBaseline, type GateTolerance } from './gate.js';
import { NORMALIZER_VERSION } from './normalize.js';
import { SCORER_VERSION } from './score.js';
import type { EvalReport } from './report-model.js';
import { startLogFile } from '../../local-stack/lambda/telemetry.js';
import { evaluateRelease, type EvalRunSettings } from './run.js';
import { lineWriter } from '../observe.js';

/** Options of one `npm run eval`. */
export interface EvalOptions extends Omit<EvalRunSettings, 'logFile'> {
  release: string;
  /** A release id, or the path of a report written earlier with `--out` (absent: no comparison). */
  baseline?: string | undefined;
  tolerance: GateTolerance;
  json: boolean;
  /** Write the HTML report here. */
  html?: string | undefined;
  /** Write the JSON report here. */
  out?: string | undefined;
  logFile?: string | undefined;
}

/** What one `npm run eval` found. */
export interface EvalOutcome {
  report: EvalReport;
  /** Why the run is no success (lost jobs, a time-out, a failed gate); empty when it is one. */
  failures: string[];
}

/** Where consumer logs and EMF metrics go by default. */
const EVAL_LOG_FILE = '.cache/eval/consumer.log';

function checkedRelease(id: string): Release {
  const release = getRelease(id);
  const problems = releaseProblems(release);
  if (release.normalizerVersion !== NORMALIZER_VERSION) problems.push(`normalizer ${release.normalizerVersion} is not this build's ${NORMALIZER_VERSION}`);
  if (release.scorerVersion !== SCORER_VERSION) problems.push(`scorer ${release.scorerVersion} is not this build's ${SCORER_VERSION}`);
  if (problems.length > 0) throw new Error(`release ${id} cannot run: ${problems.join('; ')}`);
  return release;
}

function writeFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Reads a report written with `--out`, as a baseline. */
function reportFromFile(path: string): EvalReport {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<EvalReport>;
  if (typeof parsed !== 'object' || parsed === null || parsed.release === undefined || parsed.overall === undefined) {
    throw new Error(`${path} is not an evaluation report (written by npm run eval -- --out FILE)`);
  }
  return parsed as EvalReport;
}

/**
 * What makes a run no evidence: every corpus document is valid input, so one lost, left waiting,
 * rejected or dead-lettered means the pipeline failed it (its fields count as wrong, and the run fails).
 */
function pipelineFailures(report: EvalReport, role: string): string[] {
  const o = report.operations;
  const failed = [
    ['lost', o.lost],
    ['still waiting', o.waiting],
    ['rejected', o.rejected],
    ['dead-lettered', o.deadLettered],
  ].filter(([, n]) => (n as number) > 0);
  return failed.length === 0 ? [] : [`${role} ${report.release.id}: ${failed.map(([what, n]) => `${n} job(s) ${what}`).join(', ')} (see the consumer log)`];
}

/** Runs the evaluation (see the module comment); resolves the report and its failures. */
export async function runEval(options: EvalOptions, io: CommandIo): Promise<EvalOutcome> {
  const say = lineWriter(io.stderr);
  const logFile = options.logFile ?? EVAL_LOG_FILE;
  startLogFile(logFile);
  const settings: EvalRunSettings = { ...options, logFile };
  const candidate = checkedRelease(options.release);
  const failures: string[] = [];
  let baseline: EvalReport | undefined;
  if (options.baseline !== undefined) {
    if (options.baseline.endsWith('.json')) baseline = reportFromFile(options.baseline);
    else {
      const run = await evaluateRelease(checkedRelease(options.baseline), settings, say);
      baseline = run.report;
      if (run.timedOut) failures.push(`baseline ${options.baseline}: the time limit was reached before every job ended`);
    }
  }
  const run = await evaluateRelease(candidate, settings, say);
  const report: EvalReport = baseline ? { ...run.report, baseline: compareWithBaseline(run.report, baseline, options.tolerance) } : run.report;
  if (run.timedOut) failures.push(`release ${candidate.id}: the time limit was reached before every job ended`);
  failures.push(...pipelineFailures(run.report, 'release'));
  if (baseline && options.baseline !== undefined && !options.baseline.endsWith('.json')) failures.push(...pipelineFailures(baseline, 'baseline'));
  if (report.baseline && !report.baseline.gate.passed) failures.push(`gate failed: ${report.baseline.gate.regressions.join('; ')}`);
  say('');
  io.stdout.write(`${formatEvalReport(report)}\n`);
  if (options.out) {
    writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
    say(`  report (JSON): ${options.out}`);
  }
  if (options.html) {
    const { renderEvalHtml } = await import('./html.js');
    writeFile(options.html, renderEvalHtml(report));
    say(`  report (HTML): ${options.html}`);
  }
  say(`  consumer logs and EMF metrics: ${logFile}`);
  if (options.json) io.stdout.write(`${JSON.stringify(report)}\n`);
  return { report, failures };
}
