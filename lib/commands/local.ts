/**
 * `ratelane local` (`npm run local`): the whole pipeline on local stand-ins, then a scorecard. Exit 0
 * when no job was lost and the run ended in time, else 1.
 */
import { runLocal, type LocalRunOptions } from '../local/drivers/run.js';
import type { LiveFigures } from '../local/drivers/live-load.js';
import type { Scorecard } from '../local/drivers/scorecard.js';
import { defaultLiveSettings, MAX_LIVE_DEADLINE_MS, MIN_LIVE_DEADLINE_MS } from '../config/live.js';
import type { Command, CommandIo } from './command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag } from './flags.js';

/** Usage text of `ratelane local`. */
export const LOCAL_USAGE = `Usage: npm run local -- [options]

Starts DynamoDB Local, fauxqs and a fake model provider on loopback, submits the sample corpus
across the us and eu lanes, runs the consumers until every job is in a terminal state, and prints
a scorecard. Everything started is stopped at the end, on Ctrl-C and on a crash.

  --jobs N              jobs to submit (default: the corpus once, 64); documents repeat with new source ids
  --keys K              provider keys per lane, each with its own limits (default 1)
  --provider-rpm N      requests per minute per key (default 600)
  --provider-tpm N      tokens per minute per key (default 1000000)
  --provider-daily N    requests per day per key (default 100000)
  --minute-ms MS        length of a provider "minute" locally (default 6000); the lanes' timeouts and
                        backoff caps scale with it, a day lasts 1440 of these minutes
  --day-ms MS           length of a provider "day" locally (default 1440 minutes), for daily-quota runs
  --no-admission        call without admission (round robin, no shared key pool, no lane pause)
  --fault-5xx R         share of calls answered 500/503 (0..1, default 0)
  --fault-timeout R     share of calls that never answer
  --fault-garbage R     share of answers that are not JSON
  --fault-invalid R     share of answers that break the schema
  --live-requests N     live requests fired at the lanes' live APIs while the backfill runs (default 0)
  --live-rps R          live requests started per second, across lanes (default 1)
  --live-deadline-ms MS the deadline each live request states (default the lane's, ${defaultLiveSettings().defaultDeadlineMs})
  --live-reserve S      share of each key's limits kept for live requests (0..0.9; default 0.2 with live
                        requests, else 0: the queue lane then has the whole quota)
  --seed N              seed of the fake provider's faults and latencies (default 42)
  --time-limit S        stop waiting after S seconds (default 600)
  --log-file PATH       where consumer logs and EMF metrics go (default .cache/local-run/consumer.log)
  --json                print the scorecard as one JSON object on the last line of stdout
`;

/** A share of calls, 0..1 (default 0). */
const share = () => numberFlag({ min: 0, max: 1, fallback: 0 });

/** The flags of `ratelane local`. */
const LOCAL_FLAGS = {
  jobs: numberFlag({ min: 1, max: 100_000, ...ROUND_DOWN }),
  keys: numberFlag({ min: 1, max: 20, fallback: 1, ...ROUND_DOWN }),
  'provider-rpm': numberFlag({ min: 1, max: 1_000_000, fallback: 600, ...ROUND_DOWN }),
  'provider-tpm': numberFlag({ min: 100, max: 100_000_000, fallback: 1_000_000, ...ROUND_DOWN }),
  'provider-daily': numberFlag({ min: 1, max: 100_000_000, fallback: 100_000, ...ROUND_DOWN }),
  'minute-ms': numberFlag({ min: 1_000, max: 60_000, fallback: 6_000, ...ROUND_DOWN }),
  'day-ms': numberFlag({ min: 1_000, max: 86_400_000 }),
  'no-admission': booleanFlag(),
  'fault-5xx': share(),
  'fault-timeout': share(),
  'fault-garbage': share(),
  'fault-invalid': share(),
  'live-requests': numberFlag({ min: 0, max: 100_000, fallback: 0, ...ROUND_DOWN }),
  'live-rps': numberFlag({ min: 0.01, max: 1_000, fallback: 1 }),
  'live-deadline-ms': numberFlag({ min: MIN_LIVE_DEADLINE_MS, max: MAX_LIVE_DEADLINE_MS, fallback: defaultLiveSettings().defaultDeadlineMs, ...ROUND_DOWN }),
  'live-reserve': numberFlag({ min: 0, max: 0.9 }),
  seed: numberFlag({ min: 0, max: 2 ** 31, fallback: 42, ...ROUND_DOWN }),
  'time-limit': numberFlag({ min: 5, max: 24 * 3600, fallback: 600 }),
  'log-file': stringFlag(),
  json: jsonFlag(),
};

/** Parses the flags of `ratelane local` (pure). @throws {UsageError} */
function parseLocalArgs(argv: readonly string[]): LocalRunOptions {
  const v = parseFlags(argv, LOCAL_FLAGS);
  const minuteMs = v['minute-ms'];
  return {
    jobs: v.jobs ?? 0,
    keys: v.keys,
    providerRpm: v['provider-rpm'],
    providerTpm: v['provider-tpm'],
    providerDaily: v['provider-daily'],
    minuteMs,
    dayMs: Math.floor(v['day-ms'] ?? minuteMs * 1440),
    admission: !v['no-admission'],
    faults: { serverError: v['fault-5xx'], timeout: v['fault-timeout'], garbageJson: v['fault-garbage'], schemaInvalid: v['fault-invalid'] },
    seed: v.seed,
    timeLimitSeconds: v['time-limit'],
    json: v.json,
    logFile: v['log-file'],
    live: { requests: v['live-requests'], rps: v['live-rps'], deadlineMs: v['live-deadline-ms'] },
    liveReserveShare: v['live-reserve'] ?? (v['live-requests'] > 0 ? defaultLiveSettings().reserveShare : 0),
  };
}

/** `ratelane local`. */
export const localCommand: Command<LocalRunOptions> = {
  name: 'local',
  usage: LOCAL_USAGE,
  helpTo: 'stderr',
  parse: parseLocalArgs,
  async run(options, io) {
    return localRunExitCode(await runLocal(options, io), io);
  },
};

/**
 * A local run fails (exit 1) when a job was lost, the run timed out, or every job it submitted ended
 * in a DLQ (a run that only dead-letters — e.g. keys the provider refuses — is no success).
 */
export function localRunExitCode(
  card: Pick<Scorecard, 'lost' | 'timedOut' | 'submitted' | 'deadLettered'> & Partial<Pick<LiveFigures, 'liveOverDeadline' | 'livePendingUnfinished'>>,
  io: Pick<CommandIo, 'stderr'>,
): number {
  if (card.submitted > 0 && card.deadLettered === card.submitted) {
    io.stderr.write(`ratelane local: every one of the ${card.submitted} jobs was dead-lettered: see the consumer log for why\n`);
    return 1;
  }
  if ((card.liveOverDeadline ?? 0) > 0 || (card.livePendingUnfinished ?? 0) > 0) {
    io.stderr.write(
      `ratelane local: ${card.liveOverDeadline ?? 0} live answer(s) came after their deadline, ${card.livePendingUnfinished ?? 0} handed-over job(s) did not finish\n`,
    );
    return 1;
  }
  return card.lost === 0 && !card.timedOut ? 0 : 1;
}
