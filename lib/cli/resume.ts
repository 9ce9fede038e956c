/**
 * `ratelane resume`: a person resumes a paused lane (after a billing problem is fixed, a revoked key
 * replaced, the provider secret set, or a quota raised) before its scheduled resume.
 *
 * ```
 * ratelane resume --lane us [--clear quota] [--endpoints '{"sqs":…,"s3":…,"dynamodb":…}'] [--json]
 * ```
 *
 * It clears the lane's billing and auth cooldowns (with `--clear quota` also its daily-quota cooldowns; with
 * `--clear all` every cooldown) from the rate-state table, removes the lane's pause record, and in AWS
 * enables the lane's event source mapping again and deletes the pending one-time resume schedules of
 * the lane's schedule group. With `--endpoints` (the local stack) only the rate state is touched.
 * Exit codes: 0 resumed, 1 a step failed, 2 bad usage.
 */
import { sdkPauseCalls, type AwsPauseCalls } from '../admission/pause/aws-controller.js';
import type { CooldownReason } from '../policy/index.js';
import type { LanePauseController } from '../admission/pause/lane-pause.js';
import { DynamoRateStateStore } from '../admission/dynamodb/rate-state.js';
import type { RateStateStore } from '../admission/model/store.js';
import { createAwsClients, type ServiceEndpoints } from '../platform/clients.js';
import { configuredLanes } from '../config/file.js';
import { laneByName, type LaneConfig, type LaneSet } from '../config/lanes.js';
import { errorName } from '../platform/errors.js';
import { mappingIdParameterName, pauseScheduleGroupName } from '../platform/resources.js';
import { runCommand, UsageError, type Command, type CommandIo } from './command.js';
import { endpointsFrom, jsonFlag, parseFlags, stringFlag } from './flags.js';

/** What a test (or the local stack) may inject; all optional. */
export interface ResumeWiring {
  /** Lane set (default the project's lanes). */
  lanes?: LaneSet;
  /** Replaces the lane's rate-state table adapter. */
  rateState?: (lane: LaneConfig, endpoints: ServiceEndpoints | undefined) => RateStateStore;
  /** Replaces the AWS calls (mapping, schedules); `null`: skip them. */
  pauseCalls?: (lane: LaneConfig) => AwsPauseCalls | null;
}

/** Usage text of `ratelane resume`. */
export const RESUME_USAGE = `usage: ratelane resume --lane <name> [--clear billing|quota|all] [--endpoints '<json>'] [--json]

  --lane        the region lane to resume (us, eu, ...)
  --clear       which cooldowns to lift: billing (default: billing and invalid keys), quota (also daily
                quotas), all
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"} (or env RATELANE_ENDPOINTS): only the
                rate state is touched; without them the lane's AWS resources are (default credentials)
  --json        print one JSON object on stdout
`;

/** The SSM parameter and schedule group of a lane's pause, as the lane stack creates them (`lib/platform/resources.ts`). */
export function pauseResourceNames(lane: string): { mappingIdParameter: string; scheduleGroup: string } {
  return { mappingIdParameter: mappingIdParameterName(lane), scheduleGroup: pauseScheduleGroupName(lane) };
}

/** The cooldown reasons each `--clear` value lifts. */
const CLEARS: Readonly<Record<string, readonly CooldownReason[]>> = {
  billing: ['billing', 'auth'],
  quota: ['billing', 'auth', 'quota_exhausted'],
  all: ['billing', 'auth', 'quota_exhausted', 'rate_limit'],
};

/**
 * Lifts the lane's cooldowns of the given reasons (their records and the copies in the quota owners'
 * buckets) and removes the pause and limit records. Returns what was lifted, e.g. `owner o1 (billing)`.
 */
export async function liftCooldowns(store: RateStateStore, reasons: readonly CooldownReason[]): Promise<string[]> {
  const lifted: string[] = [];
  for (const record of await store.listCooldowns()) {
    if (!reasons.includes(record.reason)) continue;
    await store.deleteCooldown(record.scope, record.id);
    if (record.scope === 'quota_owner') await store.clearBucketCooldown(record.id);
    lifted.push(`${record.scope === 'key' ? 'key' : 'owner'} ${record.id} (${record.reason})`);
  }
  await store.clearPause();
  await store.clearLimit();
  return lifted;
}

/**
 * What `ratelane resume` does, in process: lift the cooldowns, then resume through the lane's
 * controller (the local stack's poller; in AWS the mapping). For the local stack and tests:
 * `resumeLaneNow({ store: lane.admission.store, controller: lane.pause, reasons: ['billing'] })`.
 */
export async function resumeLaneNow(options: {
  store: RateStateStore;
  controller: LanePauseController;
  reasons?: readonly CooldownReason[];
}): Promise<string[]> {
  const lifted = await liftCooldowns(options.store, options.reasons ?? ['billing']);
  await options.controller.resume();
  return lifted;
}

/** The options of one `ratelane resume`. */
export interface ResumeOptions {
  lane: LaneConfig;
  /** The cooldown reasons to lift. */
  clear: readonly CooldownReason[];
  /** `--endpoints` as given (parsed in `run`, where `RATELANE_ENDPOINTS` is the fallback). */
  endpoints: string | undefined;
  json: boolean;
}

/** What a resume did (the `--json` object, with `ok`). */
interface ResumeSummary {
  lane: string;
  clearedCooldowns: string[];
  pauseRecordRemoved: boolean;
  mappingEnabled: boolean;
  schedulesDeleted: string[];
}

/** The flags of `ratelane resume`. */
const RESUME_FLAGS = { lane: stringFlag(), clear: stringFlag(), endpoints: stringFlag(), json: jsonFlag() };

/** Parses the flags against the lane set (pure). @throws {UsageError} */
function parseResumeArgs(argv: readonly string[], lanes: LaneSet): ResumeOptions {
  const v = parseFlags(argv, RESUME_FLAGS);
  const clear = CLEARS[v.clear ?? 'billing'];
  if (v.lane === undefined) throw new UsageError('--lane is required');
  if (!clear) throw new UsageError('--clear must be billing, quota or all');
  let lane: LaneConfig;
  try {
    lane = laneByName(lanes, v.lane);
  } catch (error) {
    throw new UsageError((error as Error).message, { cause: error });
  }
  return { lane, clear, endpoints: v.endpoints, json: v.json };
}

/** Lifts the cooldowns, then (in AWS) enables the mapping and deletes pending resume schedules. */
async function resume(
  options: ResumeOptions,
  endpoints: ServiceEndpoints | undefined,
  summary: ResumeSummary,
  wiring: ResumeWiring,
  say: (line: string) => void,
): Promise<void> {
  const { lane } = options;
  let clients: ReturnType<typeof createAwsClients> | undefined;
  try {
    let store: RateStateStore;
    if (wiring.rateState) store = wiring.rateState(lane, endpoints);
    else {
      clients = createAwsClients(lane.region, endpoints);
      store = new DynamoRateStateStore({ dynamodb: clients.dynamodb, tableName: lane.resources.rateStateTable });
    }
    summary.pauseRecordRemoved = (await store.readPause()) !== undefined;
    summary.clearedCooldowns = await liftCooldowns(store, options.clear);
    const cleared = summary.clearedCooldowns;
    say(
      `ratelane resume ${lane.name}: cleared ${cleared.length} cooldown(s)${cleared.length ? `: ${cleared.join(', ')}` : ''}; pause record ${summary.pauseRecordRemoved ? 'removed' : 'was not set'}`,
    );

    const names = pauseResourceNames(lane.name);
    const calls = wiring.pauseCalls
      ? wiring.pauseCalls(lane)
      : endpoints
        ? null
        : sdkPauseCalls({ region: lane.region, mappingIdParameter: names.mappingIdParameter });
    if (!calls) {
      say('  local endpoints: no event source mapping to enable (a running local stack resumes its poller on its own timer)');
      return;
    }
    const uuid = await calls.mappingId();
    await calls.setMappingEnabled(uuid, true);
    summary.mappingEnabled = true;
    // A lane limited while some owners were out runs at its whole concurrency again.
    await calls.setMappingConcurrency(uuid, lane.consumer.maximumConcurrency);
    for (const name of await calls.listSchedules(names.scheduleGroup)) {
      if (!name.startsWith(`resume-${lane.name}-`) && !name.startsWith(`restore-${lane.name}-`)) continue;
      await calls.deleteSchedule(names.scheduleGroup, name);
      summary.schedulesDeleted.push(name);
    }
    say(
      `  event source mapping enabled at its maximum concurrency ${lane.consumer.maximumConcurrency}; ${summary.schedulesDeleted.length} pending resume or restore schedule(s) deleted`,
    );
  } finally {
    clients?.destroy();
  }
}

/** Runs one resume; resolves 0, or 1 when a step failed. */
async function runResume(options: ResumeOptions, io: CommandIo, wiring: ResumeWiring): Promise<number> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const summary: ResumeSummary = { lane: options.lane.name, clearedCooldowns: [], pauseRecordRemoved: false, mappingEnabled: false, schedulesDeleted: [] };
  try {
    await resume(options, endpoints, summary, wiring, (line) => io.stderr.write(`${line}\n`));
  } catch (error) {
    io.stderr.write(`ratelane resume: ${errorName(error) ?? 'Error'}: ${(error as Error).message}\n`);
    if (options.json) io.stdout.write(`${JSON.stringify({ ...summary, ok: false })}\n`);
    return 1;
  }
  if (options.json) io.stdout.write(`${JSON.stringify({ ...summary, ok: true })}\n`);
  else io.stdout.write(`lane ${options.lane.name} resumed\n`);
  return 0;
}

/** `ratelane resume` with its wiring (lanes, rate-state store, AWS calls); {@link resumeCommand} is the default one. */
export function createResumeCommand(wiring: ResumeWiring = {}): Command<ResumeOptions> {
  return {
    name: 'resume',
    usage: RESUME_USAGE,
    helpTo: 'stdout',
    parse: (argv) => parseResumeArgs(argv, wiring.lanes ?? configuredLanes().lanes),
    run: (options, io) => runResume(options, io, wiring),
  };
}

/** `ratelane resume` on the project's lanes and real AWS clients. */
export const resumeCommand: Command<ResumeOptions> = createResumeCommand();

/**
 * Runs `ratelane resume` with wiring in the same object as the output (as the local stack's operator
 * and the admission tests call it); resolves the exit code.
 */
export function runResumeCommand(argv: readonly string[], io: CommandIo & ResumeWiring): Promise<number> {
  return runCommand(createResumeCommand(io), argv, io);
}
