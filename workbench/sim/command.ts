/**
 * `ratelane sim` (`npm run sim`): the virtual-time simulator — the strategies at scale on one lane,
 * no emulators (and no AWS SDK loaded). Exit 0 when it ran, 1 when a simulation failed.
 */
import { availableParallelism } from 'node:os';
import { DEFAULT_SIM_SETTINGS } from './settings.js';
import { MAX_BUCKET_SHARDS } from '../../lib/admission/model/bucket.js';
import { runSim, type SimIo, type SimOptions } from './driver.js';
import { DEFAULT_SCENARIO_IDS, SCENARIO_IDS, SCENARIOS } from './scenarios.js';
import { STRATEGY_IDS } from './strategies.js';
import { UsageError, type Command } from '../../lib/cli/command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, stringFlag } from '../../lib/cli/flags.js';
import { commandLine, printedBlock, startMeasuredRun, type DocsTarget } from '../drivers/docs-page.js';

/** Usage text of `ratelane sim`. */
export const SIM_USAGE = `Usage: ratelane sim [options]

Virtual-time simulation of one lane (SQS queue + DLQ, Lambda consumers, a rate-limited provider,
DynamoDB admission) running the project's own policy code, for three strategies:
  (a) naive       every failure incl. 429 -> visibility backoff, DLQ after maxReceiveCount (5)
  (b) reschedule  429 -> deferral with DelaySeconds (the policy's defer path), no admission
  (c) admission   (b) + key pool, token buckets, shared cooldowns, lane pause

Scenarios:
  minute  ${SCENARIOS.minute.title}
  day     ${SCENARIOS.day.title}
  tokens  ${SCENARIOS.tokens.title}
          (the long jobs reported apart; not in the default run)

Options:
  --jobs N              jobs submitted at once (default ${DEFAULT_SIM_SETTINGS.jobs})
  --consumers N         concurrent consumers, the mapping's MaximumConcurrency (default ${DEFAULT_SIM_SETTINGS.consumers}); the event
                        source scales up to them as AWS documents (${DEFAULT_SIM_SETTINGS.eventSource.initialConcurrency} at first, up to ${DEFAULT_SIM_SETTINGS.eventSource.scaleUpPerMinute} more a minute)
  --account-concurrency N  Lambda concurrency of the account in the region: at most this many consumers
                        run at once (default ${DEFAULT_SIM_SETTINGS.accountConcurrency}, AWS's default quota)
  --bucket-shards N     (c): items each owner's bucket is split into (default: as the lane sizes it from
                        the consumers that can run and the owners, lib/admission shardsFor)
  --owners N            quota owners: each scenario's combined quota split evenly over N keys, each its
                        own owner (default: the scenario's 4)
  --scenario LIST       comma-separated: minute, day, tokens, or all (default minute,day)
  --strategy LIST       comma-separated: naive, reschedule, admission (default all)
  --seed N              random seed (default ${DEFAULT_SIM_SETTINGS.seed}); a seed gives the same figures every run
  --failure-rate X      share of admitted calls that fail for real, 5xx/timeouts (default ${DEFAULT_SIM_SETTINGS.failureRate})
  --output-estimate N   (c): completion tokens admission assumes per call until a consumer has
                        learned them from real usage (default ${DEFAULT_SIM_SETTINGS.admissionOutputTokenEstimate}, lib/admission's default)
  --book-within-ms N    (c): how far ahead a record's call may be booked, the record waiting for its
                        slot in-process (default ${DEFAULT_SIM_SETTINGS.bookWithinMs}: the consumer's booking window, its
                        in-process wait bound, with the default lane); 0: never, every denial is re-sent
  --max-receives-per-job N  stop a strategy's run once its consumers have received N records per job
                        submitted (default ${DEFAULT_SIM_SETTINGS.maxReceivesPerJob}; 0: no limit): (b) re-sends every job each 900 s
                        while a daily quota is spent, billions of receives at 10M jobs; a run stopped
                        says so, its unsettled jobs unfinished, its drain and bill lower bounds
  --parallel N          simulations run at once in worker threads (default: min(2, cores))
  --json                also print one JSON object as the last line of stdout
  --quiet               no progress on stderr
  --write-docs          after the run, write its report (as printed, with the date, the machine and this
                        command line) into docs/benchmarks/simulator.md, section measured:sim (with
                        --scenario tokens alone: measured:sim-tokens)
  -h, --help            this text
`;

/** The flags of `ratelane sim` (`--scenarios` and `--strategies` are aliases of the singular forms). */
const SIM_FLAGS = {
  jobs: numberFlag({ min: 1, max: 2 ** 28 - 1, integer: true, fallback: DEFAULT_SIM_SETTINGS.jobs }),
  consumers: numberFlag({ min: 1, max: 10_000, integer: true, fallback: DEFAULT_SIM_SETTINGS.consumers }),
  'bucket-shards': numberFlag({ min: 1, max: MAX_BUCKET_SHARDS, integer: true }),
  owners: numberFlag({ min: 1, max: 1000, integer: true }),
  'account-concurrency': numberFlag({ min: 1, max: 100_000, integer: true, fallback: DEFAULT_SIM_SETTINGS.accountConcurrency }),
  scenario: stringFlag(),
  scenarios: stringFlag(),
  strategy: stringFlag(),
  strategies: stringFlag(),
  seed: numberFlag({ min: 0, max: 0xffffffff, integer: true, fallback: DEFAULT_SIM_SETTINGS.seed }),
  'failure-rate': numberFlag({ min: 0, max: 1, belowMax: true, fallback: DEFAULT_SIM_SETTINGS.failureRate }),
  'output-estimate': numberFlag({ min: 0, max: 1_000_000, integer: true, fallback: DEFAULT_SIM_SETTINGS.admissionOutputTokenEstimate }),
  'book-within-ms': numberFlag({ min: 0, max: 900_000, integer: true, fallback: DEFAULT_SIM_SETTINGS.bookWithinMs }),
  'max-receives-per-job': numberFlag({ min: 0, max: 100_000, integer: true, fallback: DEFAULT_SIM_SETTINGS.maxReceivesPerJob }),
  parallel: numberFlag({ min: 1, max: 64, integer: true }),
  json: jsonFlag(),
  quiet: booleanFlag(),
  'write-docs': booleanFlag(),
};

/** The options of `ratelane sim`: the simulator's, and with `--write-docs` where its report goes. */
type SimCommandOptions = SimOptions & { writeDocs?: DocsTarget };

/** A comma-separated list of known names, or `all` (absent: `defaults`, else all). @throws {UsageError} */
function list<T extends string>(name: string, value: string | undefined, known: readonly T[], defaults: readonly T[] = known): T[] {
  if (value === undefined) return [...defaults];
  if (value === '') throw new UsageError(`${name} needs a value`);
  if (value === 'all') return [...known];
  const items = value.split(',').map((s) => s.trim());
  const unknown = items.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`${name}: unknown ${unknown.join(', ')} (known: ${known.join(', ')}, all)`);
  return known.filter((k) => items.includes(k));
}

/** Parses the flags of `ratelane sim` (pure). @throws {UsageError} */
function parseSimArgs(argv: readonly string[]): SimCommandOptions {
  const v = parseFlags(argv, SIM_FLAGS, { unknownOption: (option) => `unknown option ${option}` });
  const scenarios = list('--scenario', v.scenario ?? v.scenarios, SCENARIO_IDS, DEFAULT_SCENARIO_IDS);
  // The token-bound scenario run alone has its own measured section; any other run writes the main one.
  const section = scenarios.length === 1 && scenarios[0] === 'tokens' ? 'sim-tokens' : 'sim';
  return {
    jobs: v.jobs,
    consumers: v.consumers,
    accountConcurrency: v['account-concurrency'],
    ...(v['bucket-shards'] !== undefined ? { bucketShards: v['bucket-shards'] } : {}),
    ...(v.owners !== undefined ? { owners: v.owners } : {}),
    scenarios,
    strategies: list('--strategy', v.strategy ?? v.strategies, STRATEGY_IDS),
    seed: v.seed,
    failureRate: v['failure-rate'],
    outputEstimate: v['output-estimate'],
    bookWithinMs: v['book-within-ms'],
    maxReceivesPerJob: v['max-receives-per-job'],
    parallel: v.parallel ?? Math.max(1, Math.min(2, availableParallelism())),
    json: v.json,
    quiet: v.quiet,
    ...(v['write-docs'] ? { writeDocs: { section: { page: 'simulator.md', id: section }, command: commandLine('sim', argv) } } : {}),
  };
}

/** `ratelane sim`. */
export const simCommand: Command<SimCommandOptions> = {
  name: 'sim',
  usage: SIM_USAGE,
  helpTo: 'stdout',
  parse: parseSimArgs,
  async run(options, io) {
    const docs = options.writeDocs && startMeasuredRun(options.writeDocs, io);
    const out = docs ? docs.io : io;
    const lines: SimIo = { stdout: (line) => out.stdout.write(`${line}\n`), stderr: (line) => out.stderr.write(`${line}\n`) };
    try {
      await runSim(options, lines);
    } catch (error) {
      lines.stderr(`ratelane sim: ${(error as Error)?.stack ?? String(error)}`);
      return 1;
    }
    docs?.finish(0, printedBlock(docs.printed(), options));
    return 0;
  },
};
