/**
 * `ratelane consume` (`npm run consume`): one long-lived consumer process of a lane against given
 * endpoints (see `consume.ts`), stopped cleanly by SIGTERM or Ctrl-C. Exit 0 when it stopped as asked,
 * 1 when it could not start or failed, 2 for bad usage.
 */
import { createInterface } from 'node:readline';
import { UsageError, type Command, type CommandIo } from '../../../lib/cli/command.js';
import { booleanFlag, endpointsFrom, jsonFlag, numberFlag, parseFlags, ROUND_DOWN, stringFlag } from '../../../lib/cli/flags.js';
import { configuredLanes } from '../../../lib/config/file.js';
import { errorName } from '../../../lib/platform/errors.js';
import { consume, type ConsumeSummary } from './consume.js';

/** Usage text of `ratelane consume`. */
export const CONSUME_USAGE = `Usage: npm run consume -- --lane <name> --endpoints '<json>' [options]

Runs one consumer of the lane — the local stack's poller (playing the Lambda SQS event source mapping)
in front of the real consumer handler, with admission on the lane's rate-state table — against services
already running (a kept local stack: npm run local -- --keep prints its endpoints), until SIGTERM or
Ctrl-C: then it receives no more, lets the invocations in flight finish (at most the function timeout)
and exits. Run several, each its own OS process: they share the keys' quota through the rate-state table,
and follow the lane's pause and limit whichever of them claimed it. The lane comes from the lane config
(RATELANE_CONFIG or ratelane.config.json, else the built-in lanes); its resources are created if missing.

  --lane            the region lane (us, eu, ...)
  --endpoints       the services as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS (required)
  --provider-url    the model provider's base URL (default: the lane's); keys from
                    RATELANE_<LANE>_PROVIDER_KEYS or the keys file, else the local stack's own local keys
  --minute-ms MS    the provider's minute as admission counts it (default 60000; the fake provider's
                    scaled minute when it runs scaled)
  --day-ms MS       the provider's day (default 1440 minutes)
  --concurrency N   invocations at once (default the lane's consumer.maximumConcurrency; at least 2)
  --no-admission    no shared key pool: round robin over the keys, no pause
  --follow-ms MS    how often the lane's pause and limit are read (default 1000)
  --log-file PATH   copy every log line and EMF document to this file
  --hold            get ready (the lane's resources and queue checked, admission set up), then poll only
                    once a line (or the end) comes on stdin: a supervisor starts several at one moment
  --events          every poller event, record timing, take and log line on stdout, one JSON object
                    per line ({"type": ...}), for a supervising process
  --json            the summary at the end as one JSON object on stdout (the last line)

Exit codes: 0 stopped as asked; 1 it could not start or failed; 2 bad usage.
`;

/** The options of one `ratelane consume`. */
export interface ConsumeCommandOptions {
  lane: string;
  endpoints: string | undefined;
  providerUrl: string | undefined;
  minuteMs: number;
  dayMs: number | undefined;
  concurrency: number | undefined;
  admission: boolean;
  followMs: number;
  logFile: string | undefined;
  hold: boolean;
  events: boolean;
  json: boolean;
}

const CONSUME_FLAGS = {
  lane: stringFlag(),
  endpoints: stringFlag(),
  'provider-url': stringFlag(),
  'minute-ms': numberFlag({ min: 100, max: 3_600_000, fallback: 60_000, ...ROUND_DOWN }),
  'day-ms': numberFlag({ min: 1_000, max: 30 * 86_400_000, ...ROUND_DOWN }),
  concurrency: numberFlag({ min: 2, max: 1000, integer: true }),
  'no-admission': booleanFlag(),
  'follow-ms': numberFlag({ min: 100, max: 60_000, fallback: 1_000, ...ROUND_DOWN }),
  'log-file': stringFlag(),
  hold: booleanFlag(),
  events: booleanFlag(),
  json: jsonFlag(),
};

function parseConsumeArgs(argv: readonly string[]): ConsumeCommandOptions {
  const v = parseFlags(argv, CONSUME_FLAGS);
  if (!v.lane) throw new UsageError('--lane is required (a lane name such as us or eu)');
  const url = v['provider-url'];
  if (url !== undefined && !/^https?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--provider-url "${url}" is not an http(s) URL`);
  return {
    lane: v.lane,
    endpoints: v.endpoints,
    providerUrl: url,
    minuteMs: v['minute-ms'],
    dayMs: v['day-ms'],
    concurrency: v.concurrency,
    admission: !v['no-admission'],
    followMs: v['follow-ms'],
    logFile: v['log-file'],
    hold: v.hold,
    events: v.events,
    json: v.json,
  };
}

/** The summary for people. */
function summaryText(s: ConsumeSummary): string {
  return (
    `ratelane consume: lane ${s.lane} stopped after ${Math.round(s.runMs / 1000)} s — ${s.records} record(s) in ${s.batches} batch(es), ` +
    `${s.deleted} deleted, ${s.failedRecords} sent back, ${s.committed} committed; ${s.inFlightAtStop} invocation(s) were in flight at the stop; ` +
    `${s.takes} admission take(s), ${s.conditionFailures} conditional-check failure(s)\n`
  );
}

/** What a test may inject: the stop signal (default: SIGTERM or SIGINT). */
export interface ConsumeWiring {
  stop?: AbortSignal;
}

/** Resolves at the first line on stdin, or at its end; stops reading stdin when `done` settles. */
function stdinLine(done: Promise<unknown>): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  const line = new Promise<void>((resolve) => {
    lines.once('line', () => resolve());
    lines.once('close', () => resolve());
  });
  void line.finally(() => lines.close());
  void done.finally(() => lines.close());
  return line;
}

/** Aborts on the first SIGTERM or SIGINT; the handlers are removed when `done` settles. */
function signalStop(done: Promise<unknown>): AbortSignal {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  void done.finally(() => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
  return controller.signal;
}

async function runConsume(options: ConsumeCommandOptions, io: CommandIo, wiring: ConsumeWiring): Promise<number> {
  const env = io.env ?? process.env;
  const endpoints = endpointsFrom(options.endpoints, env);
  if (!endpoints) throw new UsageError('--endpoints (or env RATELANE_ENDPOINTS) is required: consume runs against given services');
  const lanes = configuredLanes({ env }).lanes;
  const lane = Object.hasOwn(lanes, options.lane) ? lanes[options.lane] : undefined;
  if (!lane) throw new UsageError(`unknown lane "${options.lane}"; known lanes: ${Object.keys(lanes).join(', ') || '(none)'}`);
  const say = (line: string): void => void io.stderr.write(`${line}\n`);
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const stop = wiring.stop ?? signalStop(done);
  const startWhen = options.hold ? stdinLine(done) : undefined;
  try {
    const summary = await consume(
      {
        lane,
        endpoints,
        providerUrl: options.providerUrl,
        minuteMs: options.minuteMs,
        dayMs: options.dayMs,
        concurrency: options.concurrency ?? Math.max(2, lane.consumer.maximumConcurrency),
        admission: options.admission,
        followMs: options.followMs,
        logFile: options.logFile,
        ...(options.events ? { onEvent: (event) => void io.stdout.write(`${JSON.stringify(event, errorFields)}\n`) } : {}),
        say,
        startWhen,
      },
      stop,
    );
    if (options.json) io.stdout.write(`${JSON.stringify({ ok: true, ...summary })}\n`);
    else io.stderr.write(summaryText(summary));
    return 0;
  } catch (error) {
    const message = `${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
    if (options.json) io.stdout.write(`${JSON.stringify({ ok: false, error: { message } })}\n`);
    say(`ratelane consume: ${message}`);
    return 1;
  } finally {
    finished();
  }
}

/** Errors as their name and message in JSON (a poller's receive error). */
function errorFields(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

/** `ratelane consume` with its wiring. */
export function createConsumeCommand(wiring: ConsumeWiring = {}): Command<ConsumeCommandOptions> {
  return {
    name: 'consume',
    usage: CONSUME_USAGE,
    helpTo: 'stdout',
    parse: parseConsumeArgs,
    run: (options, io) => runConsume(options, io, wiring),
  };
}

/** `ratelane consume` on the configured lanes, stopped by SIGTERM or SIGINT. */
export const consumeCommand: Command<ConsumeCommandOptions> = createConsumeCommand();
