/**
 * `ratelane soak` (`npm run soak`): many jobs with random faults of every kind, then a
 * reconciliation. Exit 0 when the run drained in time and nothing was lost, committed twice, leaked or
 * multiplied; the reconciliation is printed in every case.
 */
import { runSoak, type SoakOptions } from './soak.js';
import { soakExitCode } from './report.js';
import { UsageError, type Command } from '../../../lib/cli/command.js';
import { booleanFlag, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag } from '../../../lib/cli/flags.js';

/** Usage text of `ratelane soak`. */
export const SOAK_USAGE = `Usage: npm run soak -- [options]

Runs N jobs through the local stack (DynamoDB Local, fauxqs, the fake provider, the real consumer
under a Lambda-like poller) with faults injected at the given rates, waits until every job has
settled, then reconciles: every submitted job must be in exactly one terminal state, none lost,
none committed twice, the sentinel string of some documents in no log line or metric, and the lane
queues never holding more than submitted + injected duplicate messages (queuePeak <= queueBound).

  --jobs N              jobs to submit (default 5000), corpus documents repeated with new source ids
  --keys K              provider keys per lane (default 2); key-1 of each lane runs out of credit
  --provider-rpm N      requests per minute per key (default 60)
  --provider-tpm N      tokens per minute per key (default 45000)
  --provider-daily N    requests per day per key (default 400); the daily budget refills continuously
  --day-minutes N       provider minutes in a provider day (default 12)
  --minute-ms MS        length of a provider "minute" (default 3000); lane timeouts and backoff scale with it
  --fault-5xx R         share of provider calls answered 500/503 (0..1, default 0.02)
  --fault-timeout R     share of provider calls that never answer (default 0.01)
  --fault-garbage R     share of answers that are not JSON (default 0.02)
  --fault-invalid R     share of answers that break the schema (default 0.02)
  --duplicates R        share of jobs whose message is sent twice (default 0.05)
  --crash R             chance of a consumer crash at each crash point: after the model call, after
                        the commit, after a re-send (default 0.002)
  --fault-store R       share of commits that find DynamoDB unavailable (default 0.01)
  --fault-sqs R         share of the consumer's SendMessage/ChangeMessageVisibility calls that find
                        SQS unavailable (default 0.01)
  --credit-outage M     provider minutes key-1 of each lane is out of credit, from minute 1 (default 3;
                        0: never); then an operator resumes each lane (ratelane resume --clear billing)
  --sentinels R         share of documents carrying the sentinel string (default 0.05)
  --no-admission        call without admission (round robin, no shared key pool, no lane pause)
  --seed N              seed of every injected fault (default 42)
  --time-limit S        stop after S seconds (default 900), submission included; the reconciliation is
                        still printed, with what is waiting, and the soak fails
  --stall-limit S       end the run as stalled when no job settles and no model call is made for S
                        seconds while no lane is paused (default 180; 0: never); reported, and fails
  --starve N            run N busy loops (node -e "for(;;){}") beside the soak until its end, to starve
                        the CPUs (default 0); they are killed on exit, Ctrl-C and crash
  --log-file PATH       where consumer logs and EMF metrics go (default .cache/soak/consumer.log)
  --json                print the report as one JSON object on the last line of stdout
`;

/** The flags of `ratelane soak`. */
const SOAK_FLAGS = {
  jobs: numberFlag({ min: 1, max: 100_000, fallback: 5000, ...ROUND_DOWN }),
  keys: numberFlag({ min: 1, max: 20, fallback: 2, ...ROUND_DOWN }),
  'provider-rpm': numberFlag({ min: 1, max: 1_000_000, fallback: 60, ...ROUND_DOWN }),
  'provider-tpm': numberFlag({ min: 1_000, max: 100_000_000, fallback: 45_000, ...ROUND_DOWN }),
  'provider-daily': numberFlag({ min: 1, max: 100_000_000, fallback: 400, ...ROUND_DOWN }),
  'day-minutes': numberFlag({ min: 1, max: 1440, fallback: 12 }),
  'minute-ms': numberFlag({ min: 1000, max: 60_000, fallback: 3000, ...ROUND_DOWN }),
  'fault-5xx': numberFlag({ min: 0, max: 1, fallback: 0.02 }),
  'fault-timeout': numberFlag({ min: 0, max: 1, fallback: 0.01 }),
  'fault-garbage': numberFlag({ min: 0, max: 1, fallback: 0.02 }),
  'fault-invalid': numberFlag({ min: 0, max: 1, fallback: 0.02 }),
  duplicates: numberFlag({ min: 0, max: 1, fallback: 0.05 }),
  crash: numberFlag({ min: 0, max: 0.5, fallback: 0.002 }),
  'fault-store': numberFlag({ min: 0, max: 0.5, fallback: 0.01 }),
  'fault-sqs': numberFlag({ min: 0, max: 0.5, fallback: 0.01 }),
  'credit-outage': numberFlag({ min: 0, max: 1440, fallback: 3 }),
  sentinels: numberFlag({ min: 0, max: 1, fallback: 0.05 }),
  'no-admission': booleanFlag(),
  seed: numberFlag({ min: 0, max: 2 ** 31, fallback: 42, ...ROUND_DOWN }),
  'time-limit': numberFlag({ min: 5, max: 24 * 3600, fallback: 900 }),
  'stall-limit': numberFlag({ min: 0, max: 24 * 3600, fallback: 180 }),
  starve: numberFlag({ min: 0, max: 64, fallback: 0, ...ROUND_DOWN }),
  'log-file': stringFlag(),
  json: jsonFlag(),
};

/** Parses the flags of `ratelane soak` (pure). @throws {UsageError} */
function parseSoakArgs(argv: readonly string[]): SoakOptions {
  const v = parseFlags(argv, SOAK_FLAGS);
  const faults = { serverError: v['fault-5xx'], timeout: v['fault-timeout'], garbageJson: v['fault-garbage'], schemaInvalid: v['fault-invalid'] };
  if (faults.serverError + faults.timeout + faults.garbageJson + faults.schemaInvalid > 1) {
    throw new UsageError('--fault-5xx, --fault-timeout, --fault-garbage and --fault-invalid must add up to at most 1');
  }
  return {
    jobs: v.jobs,
    keys: v.keys,
    providerRpm: v['provider-rpm'],
    providerTpm: v['provider-tpm'],
    providerDaily: v['provider-daily'],
    dayMinutes: v['day-minutes'],
    minuteMs: v['minute-ms'],
    faults,
    duplicates: v.duplicates,
    crashes: v.crash,
    storeOutages: v['fault-store'],
    sqsOutages: v['fault-sqs'],
    creditOutageMinutes: v['credit-outage'],
    sentinels: v.sentinels,
    admission: !v['no-admission'],
    seed: v.seed,
    timeLimitSeconds: v['time-limit'],
    stallLimitSeconds: v['stall-limit'],
    starve: v.starve,
    json: v.json,
    logFile: v['log-file'],
  };
}

/** `ratelane soak`. */
export const soakCommand: Command<SoakOptions> = {
  name: 'soak',
  usage: SOAK_USAGE,
  helpTo: 'stderr',
  parse: parseSoakArgs,
  run: async (options, io) => soakExitCode(await runSoak(options, io)),
};
