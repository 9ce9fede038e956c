/**
 * `ratelane eval` (`npm run eval`): the release scorecard. Runs the reviewed corpus through one lane of
 * the local stack with a release, scores every field against the reviewed objects, puts the operations
 * of the same run beside it and, with `--baseline`, gates the release: exit 1 when a field regressed
 * beyond its tolerance (or a job was lost, or the run timed out), 0 otherwise, 2 for bad flags.
 */
import { readFileSync } from 'node:fs';
import { CURRENT_RELEASE, knownReleases } from '../../../lib/contract/releases.js';
import { DEFAULT_GATE_TOLERANCE, type GateTolerance } from './gate.js';
import type { EvalLane } from './report-model.js';
import { DEFAULT_MODEL_ERROR_RATES } from '../../fake-provider/extractors/error-model.js';
import type { ModelErrorRates } from '../../fake-provider/extractors/hard-shapes.js';
import { runEval, type EvalOptions } from './eval.js';
import { UsageError, type Command } from '../../../lib/cli/command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag } from '../../../lib/cli/flags.js';
import { commandLine, printedBlock, startMeasuredRun, type DocsTarget } from '../docs-page.js';

/** Usage text of `ratelane eval`. */
export const EVAL_USAGE = `Usage: npm run eval -- [options]

Runs the reviewed corpus (clean, French and hard-shape invoices, receipts) through one lane of the local
stack with a release (its prompts, normalizer and scorer), and prints per-field accuracy (normalized:
amounts in minor units, ISO dates, trimmed and case-folded strings, line items as a set), whole-object
accuracy, the needs-review share, tokens and their cost, bucketed by language, input length, schema
and region, beside the operations of the same run (queue age p95, latency p50/p95, attempts per
completion, duplicate suppressions, unresolved batch items, regional mismatch rejections).
The local fake provider errs on hard shapes at seeded rates per prompt version (--model-errors).

  --release R           the release to evaluate (default ${CURRENT_RELEASE}; known: ${knownReleases().join(', ')})
  --baseline B          a release id, or a report written with --out: compare field by field and gate:
                        exit 1 when a field's accuracy drops by more than its tolerance
  --tolerance T         the drop (0..1 accuracy points) a field may take (default ${DEFAULT_GATE_TOLERANCE.default})
  --gate FILE           per-field tolerances, JSON {"default":0.02,"fields":{"invoice@1 currency":0},
                        "minBucketDocuments":20}
  --min-bucket N        gate each field inside every language, length, schema and region bucket of N or
                        more documents too (default ${DEFAULT_GATE_TOLERANCE.minBucketDocuments})
  --lane L              queue (default), live or batch
  --provider-url URL    evaluate against a real OpenAI-compatible provider at URL instead of the fake
                        one; keys from RATELANE_US_PROVIDER_KEYS / RATELANE_EU_PROVIDER_KEYS (JSON
                        {"key-1": "<secret>", …}, one id per --keys) or RATELANE_PROVIDER_KEYS_FILE.
                        Give --minute-ms 60000 (the default with --provider-url) and the keys' real limits
  --model M             the model to ask for with --provider-url (default the lane's, gpt-4o-mini)
  --model-errors FILE   the fake provider's error rates, JSON {"<promptVersion>":{"<shape>":rate}}
                        (default: the built-in rates per prompt version)
  --seed N              seed of the fake provider's errors and latencies (default 42)
  --keys K              provider keys per lane (default 2)
  --provider-rpm N      requests per minute per key (default 600)
  --provider-tpm N      tokens per minute per key (default 2000000)
  --minute-ms MS        length of a provider "minute" (default 6000; 60000 with --provider-url)
  --live-deadline-ms MS the deadline each live request states (default 10000)
  --time-limit S        per release, stop waiting after S seconds (default 600)
  --out FILE            also write the report as JSON (usable later as --baseline FILE)
  --html FILE           also write a self-contained HTML report
  --log-file PATH       consumer logs and EMF metrics (default .cache/eval/consumer.log)
  --json                also print the report as one JSON object on the last line of stdout
  --write-docs          after the run, write the report as printed (with the date, the machine and this
                        command line) into docs/benchmarks/eval.md, section measured:eval-<release>
                        (e.g. measured:eval-2026.12-rc1); the page must hold that section's markers
`;

const EVAL_FLAGS = {
  release: stringFlag(),
  baseline: stringFlag(),
  tolerance: numberFlag({ min: 0, max: 1 }),
  gate: stringFlag(),
  'min-bucket': numberFlag({ min: 1, max: 1_000_000, ...ROUND_DOWN }),
  lane: stringFlag(),
  'model-errors': stringFlag(),
  seed: numberFlag({ min: 0, max: 2 ** 31, fallback: 42, ...ROUND_DOWN }),
  keys: numberFlag({ min: 1, max: 20, fallback: 2, ...ROUND_DOWN }),
  'provider-rpm': numberFlag({ min: 1, max: 1_000_000, fallback: 600, ...ROUND_DOWN }),
  'provider-tpm': numberFlag({ min: 1_000, max: 100_000_000, fallback: 2_000_000, ...ROUND_DOWN }),
  'minute-ms': numberFlag({ min: 1_000, max: 60_000, ...ROUND_DOWN }),
  'provider-url': stringFlag(),
  model: stringFlag(),
  'live-deadline-ms': numberFlag({ min: 1_000, max: 60_000, fallback: 10_000, ...ROUND_DOWN }),
  'time-limit': numberFlag({ min: 5, max: 24 * 3600, fallback: 600 }),
  out: stringFlag(),
  html: stringFlag(),
  'log-file': stringFlag(),
  json: jsonFlag(),
  'write-docs': booleanFlag(),
};

/** The options of `ratelane eval`: the evaluation's, and with `--write-docs` where its report goes. */
type EvalCommandOptions = EvalOptions & { writeDocs?: DocsTarget };

function readJson(path: string, flag: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`${flag}: cannot read ${path} as JSON (${(error as Error).message})`);
  }
}

function isShareRecord(value: unknown): value is Record<string, number> {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'number' && v >= 0 && v <= 1);
}

/** `--gate FILE`, `--tolerance T` and `--min-bucket N` as one tolerance (a flag wins over the file). @throws {UsageError} */
function toleranceFrom(file: string | undefined, tolerance: number | undefined, minBucket: number | undefined): GateTolerance {
  const fromFile = file === undefined ? DEFAULT_GATE_TOLERANCE : (readJson(file, '--gate') as Partial<GateTolerance>);
  const fields = fromFile.fields ?? {};
  if (!isShareRecord(fields)) throw new UsageError('--gate: "fields" must map "schema field" to a tolerance in 0..1');
  const fallback = tolerance ?? fromFile.default ?? DEFAULT_GATE_TOLERANCE.default;
  if (typeof fallback !== 'number' || fallback < 0 || fallback > 1) throw new UsageError('--gate: "default" must be a tolerance in 0..1');
  const minBucketDocuments = minBucket ?? fromFile.minBucketDocuments ?? DEFAULT_GATE_TOLERANCE.minBucketDocuments;
  if (typeof minBucketDocuments !== 'number' || !Number.isInteger(minBucketDocuments) || minBucketDocuments < 1) {
    throw new UsageError('--gate: "minBucketDocuments" must be a whole number of at least 1');
  }
  return { default: fallback, fields, minBucketDocuments };
}

/** `--model-errors FILE` (default: the built-in rates). @throws {UsageError} */
function ratesFrom(file: string | undefined): ModelErrorRates {
  if (file === undefined) return DEFAULT_MODEL_ERROR_RATES;
  const rates = readJson(file, '--model-errors');
  if (typeof rates !== 'object' || rates === null || !Object.values(rates).every(isShareRecord)) {
    throw new UsageError('--model-errors: expected {"<promptVersion>": {"<shape>": rate in 0..1}}');
  }
  return rates as ModelErrorRates;
}

function laneFrom(lane: string | undefined): EvalLane {
  if (lane === undefined) return 'queue';
  if (lane === 'queue' || lane === 'live' || lane === 'batch') return lane;
  throw new UsageError(`--lane must be queue, live or batch, got "${lane}"`);
}

/** `--provider-url URL [--model M]`: a real provider (an http(s) URL). @throws {UsageError} */
function realProviderFrom(url: string | undefined, model: string | undefined): EvalOptions['realProvider'] {
  if (url === undefined) {
    if (model !== undefined) throw new UsageError('--model needs --provider-url: the fake provider answers any model');
    return undefined;
  }
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError(`--provider-url must be an http(s) URL, got "${url}"`);
  return { baseUrl: url.replace(/\/+$/, ''), model };
}

/** Parses the flags of `ratelane eval` (reads the --gate and --model-errors files). @throws {UsageError} */
function parseEvalArgs(argv: readonly string[]): EvalCommandOptions {
  const v = parseFlags(argv, EVAL_FLAGS);
  const release = v.release ?? CURRENT_RELEASE;
  for (const id of [release, v.baseline]) {
    if (id !== undefined && !id.endsWith('.json') && !knownReleases().includes(id)) {
      throw new UsageError(`unknown release "${id}" (known: ${knownReleases().join(', ')})`);
    }
  }
  return {
    release,
    baseline: v.baseline,
    tolerance: toleranceFrom(v.gate, v.tolerance, v['min-bucket']),
    lane: laneFrom(v.lane),
    modelErrorRates: ratesFrom(v['model-errors']),
    seed: v.seed,
    keys: v.keys,
    providerRpm: v['provider-rpm'],
    providerTpm: v['provider-tpm'],
    minuteMs: v['minute-ms'] ?? (v['provider-url'] ? 60_000 : 6_000),
    realProvider: realProviderFrom(v['provider-url'], v.model),
    liveDeadlineMs: v['live-deadline-ms'],
    timeLimitSeconds: v['time-limit'],
    json: v.json,
    html: v.html,
    out: v.out,
    logFile: v['log-file'],
    ...(v['write-docs'] ? { writeDocs: { section: { page: 'eval.md', id: `eval-${release}` }, command: commandLine('eval', argv) } } : {}),
  };
}

/** `ratelane eval`. */
export const evalCommand: Command<EvalCommandOptions> = {
  name: 'eval',
  usage: EVAL_USAGE,
  helpTo: 'stderr',
  parse: parseEvalArgs,
  async run(options, io) {
    const docs = options.writeDocs && startMeasuredRun(options.writeDocs, io);
    const { failures } = await runEval(options, docs ? docs.io : io);
    for (const failure of failures) io.stderr.write(`ratelane eval: ${failure}\n`);
    const code = failures.length === 0 ? 0 : 1;
    docs?.finish(code, printedBlock(docs.printed(), options));
    return code;
  },
};
