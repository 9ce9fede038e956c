/**
 * `ratelane resume`: a person resumes a paused lane (after a billing problem is fixed, or a quota
 * was raised) before its scheduled resume.
 *
 * ```
 * ratelane resume --lane us [--clear quota] [--endpoints '{"sqs":…,"s3":…,"dynamodb":…}'] [--json]
 * ```
 *
 * It clears the lane's billing cooldowns (with `--clear quota` also its daily-quota cooldowns; with
 * `--clear all` every cooldown) from the rate-state table, removes the lane's pause record, and in AWS
 * enables the lane's event source mapping again and deletes the pending one-time resume schedules of
 * the lane's schedule group. With `--endpoints` (the local stack) only the rate state is touched.
 * Exit codes: 0 resumed, 1 a step failed, 2 bad usage.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_LANES, laneByName, type LaneConfig, type LaneSet } from '../config/lanes.js';
import { createAwsClients, type ServiceEndpoints } from '../aws/clients.js';
import { sdkPauseCalls, type AwsPauseCalls } from './aws-pause.js';
import type { CooldownReason } from './choice.js';
import type { LanePauseController } from './pause.js';
import { DynamoRateStateStore, type RateStateStore } from './rate-state.js';

/** Where the command writes, and what a test may inject. */
export interface ResumeCommandIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  env?: Readonly<Record<string, string | undefined>>;
  /** Lane set (default the project's lanes). */
  lanes?: LaneSet;
  /** Replaces the lane's rate-state table adapter. */
  rateState?: (lane: LaneConfig, endpoints: ServiceEndpoints | undefined) => RateStateStore;
  /** Replaces the AWS calls (mapping, schedules); `null`: skip them. */
  pauseCalls?: (lane: LaneConfig) => AwsPauseCalls | null;
}

export const RESUME_USAGE = `usage: ratelane resume --lane <name> [--clear billing|quota|all] [--endpoints '<json>'] [--json]

  --lane        the region lane to resume (us, eu, ...)
  --clear       which cooldowns to lift: billing (default), quota (billing and daily quota), all
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"} (or env RATELANE_ENDPOINTS): only the
                rate state is touched; without them the lane's AWS resources are (default credentials)
  --json        print one JSON object on stdout
`;

/** The SSM parameter, schedule group and their naming, as the lane stack creates them (lib/infra/consumer.ts). */
export function pauseResourceNames(lane: string): { mappingIdParameter: string; scheduleGroup: string } {
  return { mappingIdParameter: `/ratelane/${lane}/consumer/event-source-mapping-id`, scheduleGroup: `ratelane-${lane}-pause` };
}

const CLEARS: Record<string, readonly CooldownReason[]> = {
  billing: ['billing'],
  quota: ['billing', 'quota_exhausted'],
  all: ['billing', 'quota_exhausted', 'rate_limit'],
};

/**
 * Lifts the lane's cooldowns of the given reasons (their records and the copies in the quota owners'
 * buckets) and removes the pause record. Returns what was lifted, e.g. `owner o1 (billing)`.
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
  return lifted;
}

/**
 * What `ratelane resume` does, in process: lift the cooldowns, then resume through the lane's
 * controller (the local stack's poller; in AWS the mapping). For the local stack and tests:
 * `resumeLaneNow({ store: lane.admission.store, controller: lane.pause, reasons: ['billing'] })`.
 */
export async function resumeLaneNow(options: { store: RateStateStore; controller: LanePauseController; reasons?: readonly CooldownReason[] }): Promise<string[]> {
  const lifted = await liftCooldowns(options.store, options.reasons ?? ['billing']);
  await options.controller.resume();
  return lifted;
}

/** Runs `ratelane resume`; resolves the exit code. */
export async function runResumeCommand(argv: string[], io: ResumeCommandIo): Promise<number> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: { lane: { type: 'string' }, clear: { type: 'string' }, endpoints: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    }).values as Record<string, unknown>;
  } catch (error) {
    io.stderr.write(`error: ${(error as Error).message}\n\n${RESUME_USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(RESUME_USAGE);
    return 0;
  }
  const clear = CLEARS[typeof values.clear === 'string' ? values.clear : 'billing'];
  if (typeof values.lane !== 'string' || !clear) {
    io.stderr.write(`error: ${typeof values.lane !== 'string' ? '--lane is required' : `--clear must be billing, quota or all`}\n\n${RESUME_USAGE}`);
    return 2;
  }
  let lane: LaneConfig;
  let endpoints: ServiceEndpoints | undefined;
  try {
    lane = laneByName(io.lanes ?? DEFAULT_LANES, values.lane);
    const raw = typeof values.endpoints === 'string' ? values.endpoints : (io.env ?? process.env).RATELANE_ENDPOINTS;
    endpoints = raw ? (JSON.parse(raw) as ServiceEndpoints) : undefined;
  } catch (error) {
    io.stderr.write(`error: ${(error as Error).message}\n\n${RESUME_USAGE}`);
    return 2;
  }

  const say = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  const summary = { lane: lane.name, clearedCooldowns: [] as string[], pauseRecordRemoved: false, mappingEnabled: false, schedulesDeleted: [] as string[] };
  let clients: ReturnType<typeof createAwsClients> | undefined;
  try {
    let store: RateStateStore;
    if (io.rateState) store = io.rateState(lane, endpoints);
    else {
      clients = createAwsClients(lane.region, endpoints);
      store = new DynamoRateStateStore({ dynamodb: clients.dynamodb, tableName: lane.resources.rateStateTable });
    }
    summary.pauseRecordRemoved = (await store.readPause()) !== undefined;
    summary.clearedCooldowns = await liftCooldowns(store, clear);
    say(`ratelane resume ${lane.name}: cleared ${summary.clearedCooldowns.length} cooldown(s)${summary.clearedCooldowns.length ? `: ${summary.clearedCooldowns.join(', ')}` : ''}; pause record ${summary.pauseRecordRemoved ? 'removed' : 'was not set'}`);

    const names = pauseResourceNames(lane.name);
    const calls = io.pauseCalls ? io.pauseCalls(lane) : endpoints ? null : sdkPauseCalls({ region: lane.region, mappingIdParameter: names.mappingIdParameter });
    if (calls) {
      await calls.setMappingEnabled(await calls.mappingId(), true);
      summary.mappingEnabled = true;
      for (const name of await calls.listSchedules(names.scheduleGroup)) {
        if (!name.startsWith(`resume-${lane.name}-`)) continue;
        await calls.deleteSchedule(names.scheduleGroup, name);
        summary.schedulesDeleted.push(name);
      }
      say(`  event source mapping enabled; ${summary.schedulesDeleted.length} pending resume schedule(s) deleted`);
    } else {
      say('  local endpoints: no event source mapping to enable (a running local stack resumes its poller on its own timer)');
    }
  } catch (error) {
    io.stderr.write(`ratelane resume: ${(error as Error).name}: ${(error as Error).message}\n`);
    if (values.json) io.stdout.write(`${JSON.stringify({ ...summary, ok: false })}\n`);
    return 1;
  } finally {
    clients?.destroy();
  }
  if (values.json) io.stdout.write(`${JSON.stringify({ ...summary, ok: true })}\n`);
  else io.stdout.write(`lane ${lane.name} resumed\n`);
  return 0;
}
