/**
 * `ratelane bench` (`npm run bench`): the strategies side by side on the local stack, and the
 * consumer's overhead beside a floor; or, with `--scenario`, the same strategies in a scenario where
 * a plain limiter fails, each held to the scenario's own bound. Exit 0 when every strategy finished in time with nothing lost
 * or committed twice (with `--strict`, also when strategy (c) met every target), else 1.
 */
import { runBench, runScenarioBench, scenarioExitCode } from './bench.js';
import { benchExitCode } from './report.js';
import { STRATEGY_ALIASES, STRATEGY_ORDER, type BenchOptions, type BenchStrategyId } from './strategies.js';
import { DEAD_KEY_ID, SCENARIO_CHOICES, type ScenarioChoice } from './scenarios/scenarios.js';
import { UsageError, type Command } from '../../../lib/cli/command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag } from '../../../lib/cli/flags.js';
import { commandLine, printedBlock, startMeasuredRun, type DocsTarget } from '../docs-page.js';
import { formatScenarioDocsTable } from './scenarios/report.js';

/** Usage text of `ratelane bench`. */
export const BENCH_USAGE = `Usage: npm run bench -- [options]

Runs the same job set through three strategies on the local stack (DynamoDB Local, fauxqs, the fake
provider at a fixed quota, the real consumer under a Lambda-like poller), one after the other:
  (a) naive       every failure, 429 included, back through the visibility timeout with exponential
                  backoff; dead-lettered after maxReceiveCount (5) receives; no admission
  (b) reschedule  429s re-sent with DelaySeconds (the policy's defer path); no admission
  (c) admission   (b) plus admission control (key pool, token buckets, cooldowns, lane pause)
Per strategy: drain time (from the consumers' start, the jobs already queued, to the last commit) /
burst-aware minimum (a perfect scheduler's drain; shown only for a strategy that committed every job,
else "gave up on N"), model calls, attempts and admission denials per
completion, 429s, dead-lettered, duplicates, lost, and the consumer's own overhead per message (record
time minus model time), beside a floor measured on the same emulators (bare receive + one conditional
put + delete per message); the probe and the floor run in alternating rounds, so both meet the same
state of the machine.
Progress goes to stderr, the table to stdout.

Scenarios (--scenario), each run for every strategy, each with its own burst-aware bound (a perfect
scheduler's drain on its quota) and (c)'s targets: calls per completion <= 1.03, attempts per
completion <= 1.10, 0 dead-lettered, 0 lost, drain <= 1.05x the scenario's bound. Per lane --keys keys, each its own quota owner.
  baseline           the above (default; --provider-rpm and --provider-tpm apply)
  uneven-tokens      one job in ten 5-10x longer; tokens per minute bind (10000 per key), requests are
                     loose (4 x --provider-rpm); bound: tokens or requests, whichever takes longer
  daily-reset        a fixed daily request quota per key (60% of the busiest lane's jobs over its keys)
                     runs out mid-run and resets (a day twice as long as spending its quota takes);
                     the provider's day and the consumer's start together; bound includes the reset wait
  key-out-of-credit  ${DEAD_KEY_ID} of each lane out of credit for the whole run (needs --keys 2 or more);
                     bound: requests on the keys with credit only
  two-consumers      the baseline's jobs and quota; each lane's consumers run as 2 processes (own poller,
                     AWS clients, admission store, handler instances; for (c) each an OS process,
                     ratelane consume) sharing its keys and rate-state table, the lane's concurrency
                     split between them; bound: the baseline's
  noisy-neighbour    tenant A's 2000 jobs queued, tenant B's 100 sent 4 minutes into the drain, equal
                     weights; the baseline's quota; bound: the baseline's on all 2100 jobs; and B's last
                     commit <= 1.2x the time B's fair share (half the quota) needs for its jobs
  urgent-behind-bulk 1000 bulk jobs queued, 50 urgent ones sent 4 minutes into the drain; 2 x
                     --provider-rpm; bound: the baseline's on all 1050; and the urgent jobs' p95 from
                     submission to commit <= 2 provider minutes
                     (these two ignore --jobs)
  all                baseline, then the six others: a report each, then a summary
The overhead probe and the floors run with the baseline only.

  --jobs N              jobs (default 300; corpus documents repeated, English to us, German to eu)
  --keys K              provider keys per lane, each its own quota owner (default 2)
  --provider-rpm N      requests per minute per key (default 8)
  --provider-tpm N      tokens per minute per key (default 1000000: requests bind, not tokens)
  --provider-share X    the fake provider serves this share (0.1..1) of each per-minute limit the lanes are
                        configured with, as when a config overstates the quota or another client spends the
                        rest; the bounds are the provider's (default 1; the baseline only, not with --write-docs)
  --minute-ms MS        length of a provider "minute" (default 3000); lane timeouts and backoff scale with it
  --strategies LIST     which to run, comma-separated: a|naive, b|reschedule, c|admission (default all)
  --scenario NAME       baseline (default), uneven-tokens, daily-reset, key-out-of-credit, two-consumers,
                        noisy-neighbour, urgent-behind-bulk
                        or all
  --probe-messages N    jobs sent one at a time through the (c) consumer, for its overhead without
                        contention (default 100; 0 skips it)
  --floor-messages N    messages each floor loop times (default 300; 0 skips the floors)
  --warmup-messages N   before the first strategy, N floor messages 10 at a time and 20 jobs through
                        the (c) consumer, counted nowhere: DynamoDB Local's JVM compiles as it runs,
                        a cold start's first seconds are several times slower (default 1000; 0 skips)
  --seed N              seed of the fake provider's latencies (default 42)
  --time-limit S        per strategy, stop waiting after S seconds (default 300)
  --log-file PATH       consumer logs and EMF metrics (default .cache/bench/consumer.log)
  --strict              exit 1 when strategy (c) misses a target (default: reported only)
  --json                also print the report as one JSON object on the last line of stdout (with a
                        scenario: its report; with all: every scenario's and the baseline's)
  --html FILE           also write a self-contained HTML page (per strategy, jobs committed over time
                        against the quota line) to FILE; its path goes to stderr (the baseline's only)
  --write-docs          after the run, write it (with the date, the machine and this command line) into
                        docs/benchmarks: the baseline's report as printed into bench.md, section
                        measured:bench-baseline; with --scenario all, a table of every scenario into
                        scenarios.md, section measured:scenarios (not with one other scenario)
`;

/** The flags of `ratelane bench`. */
const BENCH_FLAGS = {
  jobs: numberFlag({ min: 1, max: 100_000, fallback: 300, ...ROUND_DOWN }),
  keys: numberFlag({ min: 1, max: 20, fallback: 2, ...ROUND_DOWN }),
  'provider-rpm': numberFlag({ min: 1, max: 1_000_000, fallback: 8, ...ROUND_DOWN }),
  'provider-tpm': numberFlag({ min: 1_000, max: 100_000_000, fallback: 1_000_000, ...ROUND_DOWN }),
  'provider-share': numberFlag({ min: 0.1, max: 1, fallback: 1 }),
  'minute-ms': numberFlag({ min: 1000, max: 60_000, fallback: 3000, ...ROUND_DOWN }),
  strategies: stringFlag(),
  scenario: stringFlag(),
  'floor-messages': numberFlag({ min: 0, max: 100_000, fallback: 300, ...ROUND_DOWN }),
  'probe-messages': numberFlag({ min: 0, max: 10_000, fallback: 100, ...ROUND_DOWN }),
  'warmup-messages': numberFlag({ min: 0, max: 100_000, fallback: 1000, ...ROUND_DOWN }),
  seed: numberFlag({ min: 0, max: 2 ** 31, fallback: 42, ...ROUND_DOWN }),
  'time-limit': numberFlag({ min: 5, max: 24 * 3600, fallback: 300 }),
  'log-file': stringFlag(),
  strict: booleanFlag(),
  json: jsonFlag(),
  html: stringFlag(),
  'write-docs': booleanFlag(),
};

/** The options of `ratelane bench`: the bench's, and with `--write-docs` where its report goes. */
type BenchCommandOptions = BenchOptions & { writeDocs?: DocsTarget };

/**
 * Where `--write-docs` writes: the baseline's report into bench.md, every scenario's into scenarios.md.
 * @throws {UsageError} for one scenario other than the baseline: its report would replace the table of all
 */
function docsTarget(scenario: ScenarioChoice | undefined, argv: readonly string[]): DocsTarget {
  const command = commandLine('bench', argv);
  if (scenario === undefined || scenario === 'baseline') return { section: { page: 'bench.md', id: 'bench-baseline' }, command };
  if (scenario === 'all') return { section: { page: 'scenarios.md', id: 'scenarios' }, command };
  throw new UsageError(
    `--write-docs writes the baseline (docs/benchmarks/bench.md) or every scenario (--scenario all, docs/benchmarks/scenarios.md); a run of ${scenario} alone would replace the table of all: nothing is written for it`,
  );
}

/** `--strategies`: names or letters, comma-separated, run in the fixed order (default all). @throws {UsageError} */
function strategiesFrom(list: string | undefined): BenchStrategyId[] {
  if (list === undefined) return [...STRATEGY_ORDER];
  const asked = new Set<BenchStrategyId>();
  for (const name of list
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)) {
    const id = STRATEGY_ALIASES[name];
    if (!id) throw new UsageError(`--strategies: unknown strategy "${name}" (use a|naive, b|reschedule, c|admission)`);
    asked.add(id);
  }
  if (asked.size === 0) throw new UsageError('--strategies must name at least one strategy');
  return STRATEGY_ORDER.filter((id) => asked.has(id));
}

/** `--scenario`: one of {@link SCENARIO_CHOICES} (absent: the baseline). @throws {UsageError} */
function scenarioFrom(name: string | undefined, keys: number): ScenarioChoice | undefined {
  if (name === undefined) return undefined;
  const choice = SCENARIO_CHOICES.find((c) => c === name.trim().toLowerCase());
  if (!choice) throw new UsageError(`--scenario: unknown scenario "${name}" (use ${SCENARIO_CHOICES.join(', ')})`);
  if ((choice === 'key-out-of-credit' || choice === 'all') && keys < 2) {
    throw new UsageError(`--scenario ${choice}: key-out-of-credit needs --keys 2 or more (${DEAD_KEY_ID} of each lane is out of credit), got ${keys}`);
  }
  return choice;
}

/** Parses the flags of `ratelane bench` (pure). @throws {UsageError} */
function parseBenchArgs(argv: readonly string[]): BenchCommandOptions {
  const v = parseFlags(argv, BENCH_FLAGS);
  if (v.html !== undefined && v.html.trim() === '') throw new UsageError('--html needs a file path');
  const scenario = scenarioFrom(v.scenario, v.keys);
  if (v['provider-share'] < 1 && (scenario ?? 'baseline') !== 'baseline') throw new UsageError('--provider-share applies to the baseline only');
  if (v['provider-share'] < 1 && v['write-docs']) throw new UsageError('--provider-share below 1 is not the baseline bench.md records: drop --write-docs');
  if (v.html !== undefined && scenario !== undefined && scenario !== 'baseline' && scenario !== 'all') {
    throw new UsageError(`--html draws the baseline's drain curves: use it with --scenario baseline or all, not ${scenario}`);
  }
  return {
    jobs: v.jobs,
    keys: v.keys,
    providerRpm: v['provider-rpm'],
    providerTpm: v['provider-tpm'],
    ...(v['provider-share'] < 1 ? { providerShare: v['provider-share'] } : {}),
    minuteMs: v['minute-ms'],
    strategies: strategiesFrom(v.strategies),
    floorMessages: v['floor-messages'],
    probeMessages: v['probe-messages'],
    warmupMessages: v['warmup-messages'],
    seed: v.seed,
    timeLimitSeconds: v['time-limit'],
    strict: v.strict,
    json: v.json,
    logFile: v['log-file'],
    ...(v.html !== undefined ? { html: v.html } : {}),
    ...(scenario !== undefined ? { scenario } : {}),
    ...(v['write-docs'] ? { writeDocs: docsTarget(scenario, argv) } : {}),
  };
}

/** `ratelane bench`. */
export const benchCommand: Command<BenchCommandOptions> = {
  name: 'bench',
  usage: BENCH_USAGE,
  helpTo: 'stderr',
  parse: parseBenchArgs,
  async run(options, io) {
    const docs = options.writeDocs && startMeasuredRun(options.writeDocs, io);
    if ((options.scenario ?? 'baseline') === 'baseline') {
      const code = benchExitCode(await runBench(options, docs ? docs.io : io), options);
      docs?.finish(code, printedBlock(docs.printed(), options));
      return code;
    }
    const result = await runScenarioBench(options, io);
    const code = scenarioExitCode(result, options);
    docs?.finish(code, formatScenarioDocsTable(result.reports));
    return code;
  },
};
