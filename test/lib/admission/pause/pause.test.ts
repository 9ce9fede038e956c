/**
 * Pausing a lane: the AWS pause's calls and their order (with fake calls), and the pause claim that
 * lets one of several consumers pause the lane.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AwsLanePauseController,
  atExpression,
  RESUME_TARGET_ARN,
  resumeScheduleName,
  type AwsPauseCalls,
  type ResumeScheduleInput,
} from '../../../../lib/admission/pause/aws-controller.js';
import { LanePauser, limitedConcurrency, type LanePauseController } from '../../../../lib/admission/pause/lane-pause.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';
import type { PauseRecord, RateStateStore } from '../../../../lib/admission/model/store.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');

function fakeCalls(log: string[], options: { failSchedule?: boolean } = {}): AwsPauseCalls & { schedules: ResumeScheduleInput[] } {
  const schedules: ResumeScheduleInput[] = [];
  return {
    schedules,
    mappingId: async () => 'uuid-1',
    setMappingEnabled: async (uuid, enabled) => {
      log.push(`mapping ${uuid} ${enabled ? 'enabled' : 'disabled'}`);
    },
    setMappingConcurrency: async (uuid, n) => {
      log.push(`mapping ${uuid} concurrency ${n}`);
    },
    createResumeSchedule: async (input) => {
      if (options.failSchedule) throw Object.assign(new Error('denied'), { name: 'AccessDeniedException' });
      schedules.push(input);
      log.push(`schedule ${input.name}`);
      return true;
    },
    listSchedules: async () => schedules.map((s) => s.name),
    deleteSchedule: async (_group, name) => {
      log.push(`delete ${name}`);
    },
  };
}

describe('admission: lane pause in AWS', () => {
  it('creates the one-time resume schedule first, then disables the mapping', async () => {
    // Prepare
    const log: string[] = [];
    const calls = fakeCalls(log);
    const until = new Date(T0 + 3 * 3600_000 + 250);
    const controller = new AwsLanePauseController({
      lane: 'us',
      calls,
      scheduleGroup: 'ratelane-us-pause',
      schedulerRoleArn: 'arn:aws:iam::1:role/r',
      maximumConcurrency: 10,
      now: () => T0,
    });
    // Act
    await controller.pause(until, 'quota_exhausted');
    // Assess
    assert.deepEqual(log, ['schedule resume-us-20260101T030001', 'mapping uuid-1 disabled']);
    const [schedule] = calls.schedules;
    assert.equal(schedule?.expression, 'at(2026-01-01T03:00:01)', 'rounded up to the second: never early');
    assert.equal(schedule?.group, 'ratelane-us-pause');
    assert.deepEqual(JSON.parse(schedule!.input), { UUID: 'uuid-1', Enabled: true });
    assert.equal(RESUME_TARGET_ARN, 'arn:aws:scheduler:::aws-sdk:lambda:updateEventSourceMapping');
    assert.equal(schedule?.targetArn, RESUME_TARGET_ARN);
    await controller.resume();
    assert.deepEqual(log.slice(-2), ['mapping uuid-1 enabled', 'mapping uuid-1 concurrency 10'], 'resumed at the whole concurrency');
  });

  it("targets the resume in the stack's own partition (China, GovCloud), read off the scheduler role", async () => {
    // Prepare
    const schedules = new Map<string, string | undefined>();
    for (const partition of ['aws-cn', 'aws-us-gov']) {
      const calls = fakeCalls([]);
      const controller = new AwsLanePauseController({
        lane: 'us',
        calls,
        scheduleGroup: 'g',
        schedulerRoleArn: `arn:${partition}:iam::1:role/r`,
        maximumConcurrency: 10,
        now: () => T0,
      });
      // Act
      await controller.pause(new Date(T0 + 3600_000), 'billing');
      schedules.set(partition, calls.schedules[0]?.targetArn);
    }
    // Assess
    assert.equal(schedules.get('aws-cn'), 'arn:aws-cn:scheduler:::aws-sdk:lambda:updateEventSourceMapping');
    assert.equal(schedules.get('aws-us-gov'), 'arn:aws-us-gov:scheduler:::aws-sdk:lambda:updateEventSourceMapping');
  });

  it('never disables the mapping when the resume schedule cannot be created', async () => {
    // Prepare: Scheduler refuses the schedule
    const log: string[] = [];
    const controller = new AwsLanePauseController({
      lane: 'us',
      calls: fakeCalls(log, { failSchedule: true }),
      scheduleGroup: 'g',
      schedulerRoleArn: 'r',
      maximumConcurrency: 10,
      now: () => T0,
    });
    // Act
    const paused = controller.pause(new Date(T0 + 3600_000), 'billing');
    // Assess
    await assert.rejects(paused);
    assert.deepEqual(log, []);
  });

  it("limits the mapping's maximum concurrency in proportion, after scheduling its restore to the lane's", async () => {
    // Prepare: a mapping of 10
    const log: string[] = [];
    const calls = fakeCalls(log);
    const controller = new AwsLanePauseController({
      lane: 'us',
      calls,
      scheduleGroup: 'g',
      schedulerRoleArn: 'arn:aws:iam::1:role/r',
      maximumConcurrency: 10,
      now: () => T0,
    });
    // Act: a third of the owners left, then a tenth (never below AWS's minimum of 2)
    await controller.limit(1 / 3, new Date(T0 + 3600_000), 'billing');
    await controller.limit(0.1, new Date(T0 + 7200_000), 'quota_exhausted');
    // Assess
    assert.deepEqual(log, [
      'schedule restore-us-20260101T010000',
      'mapping uuid-1 concurrency 4',
      'schedule restore-us-20260101T020000',
      'mapping uuid-1 concurrency 2',
    ]);
    assert.deepEqual(JSON.parse(calls.schedules[0]!.input), { UUID: 'uuid-1', ScalingConfig: { MaximumConcurrency: 10 } });
    assert.equal(limitedConcurrency(10, 0.5), 5);
    assert.equal(limitedConcurrency(3, 0.99), 3, 'never above the lane');
  });

  it('schedules at least a minute ahead; names and expressions are what Scheduler accepts', () => {
    // Act + Assess
    assert.equal(atExpression(new Date('2026-03-04T05:06:07.001Z')), 'at(2026-03-04T05:06:08)');
    assert.match(resumeScheduleName('eu', new Date(T0)), /^resume-eu-20260101T000000$/);
    assert.ok(resumeScheduleName('abcdefghij', new Date(T0)).length <= 64);
  });
});

describe('admission: pause claim', () => {
  it('one of several consumers pauses the lane; a failed pause is released for the next one', async () => {
    // Prepare: an in-memory claim with the store's rule (no pause that has not ended)
    let record: PauseRecord | undefined;
    const store = {
      claimPause: async (r: PauseRecord, now: number) => {
        if (record && record.until > now) return false;
        record = r;
        return true;
      },
      clearPause: async () => {
        record = undefined;
      },
    } as unknown as RateStateStore;
    const paused: Date[] = [];
    let fail = true;
    const controller: LanePauseController = {
      pause: async (until) => {
        if (fail) throw new Error('mapping update failed');
        paused.push(until);
      },
      resume: async () => undefined,
    };
    const pauser = new LanePauser({ store, controller, now: () => T0 });
    const until = new Date(T0 + 60_000);
    // Act + Assess
    await assert.rejects(pauser.requestPause(until, 'quota_exhausted'));
    assert.equal(record, undefined, 'claim released');
    fail = false;
    const results = await Promise.all([pauser.requestPause(until, 'quota_exhausted'), pauser.requestPause(until, 'quota_exhausted')]);
    assert.deepEqual(results.sort(), [false, true]);
    assert.equal(paused.length, 1);
    assert.equal(await pauser.requestPause(new Date(T0 - 1), 'quota_exhausted'), false, 'a past time never pauses');
  });

  it('one consumer limits the lane to the share of owners left, once per change; a lower share replaces a higher one', async () => {
    // Prepare: two consumers' pausers on one table, a controller that records its limits
    const store = new MemoryRateStateStore();
    const limits: string[] = [];
    const controller: LanePauseController = {
      pause: async (until) => void limits.push(`pause ${until.getTime() - T0}`),
      resume: async () => undefined,
      limit: async (share, until) => void limits.push(`limit ${share} ${until.getTime() - T0}`),
    };
    const [a, b] = [new LanePauser({ store, controller, now: () => T0 }), new LanePauser({ store, controller, now: () => T0 })];
    const half = { share: 0.5, until: new Date(T0 + 60_000), reason: 'billing' as const };
    // Act
    const first = await Promise.all([a.requestCapacity(half), b.requestCapacity(half)]);
    const again = await a.requestCapacity(half);
    const lower = await b.requestCapacity({ share: 0.25, until: new Date(T0 + 30_000), reason: 'billing' });
    const higher = await a.requestCapacity({ share: 0.75, until: new Date(T0 + 90_000), reason: 'billing' });
    const none = await b.requestCapacity({ share: 0, until: new Date(T0 + 45_000), reason: 'quota_exhausted' });
    // Assess
    assert.deepEqual(first.sort(), ['limited', undefined]);
    assert.equal(again, undefined, 'the same limit again costs nothing');
    assert.equal(lower, 'limited');
    assert.equal(higher, undefined, 'a higher share waits for the limit to end');
    assert.equal(none, 'paused', 'no owner left: the lane pauses');
    assert.deepEqual(limits, ['limit 0.5 60000', 'limit 0.25 30000', 'pause 45000']);
  });

  it('a lane booked ahead is limited once: another far slot neither extends it nor changes the mapping again, a lower limit for owners out does', async () => {
    // Prepare: two consumers' pausers on one table; owners out extend a limit, slots booked ahead do not
    const store = new MemoryRateStateStore();
    const limits: string[] = [];
    const controller: LanePauseController = {
      pause: async () => undefined,
      resume: async () => undefined,
      limit: async (share, until, reason) => void limits.push(`limit ${share} ${until.getTime() - T0} ${reason}`),
    };
    const [a, b] = [new LanePauser({ store, controller, now: () => T0 }), new LanePauser({ store, controller, now: () => T0 })];
    const ahead = (until: number, share = 0.3) => ({ share, until: new Date(T0 + until), reason: 'booked_ahead' as const });
    // Act
    const first = await a.requestCapacity(ahead(1_000_000));
    const laterSameInstance = await a.requestCapacity(ahead(1_200_000));
    const laterOtherInstance = await b.requestCapacity(ahead(1_300_000));
    const lowerOtherInstance = await b.requestCapacity(ahead(1_100_000, 0.2));
    const ownersOut = await a.requestCapacity({ share: 0.2, until: new Date(T0 + 2_000_000), reason: 'billing' });
    const aheadBelowOwnersOut = await a.requestCapacity(ahead(1_500_000, 0.1));
    // Assess
    assert.deepEqual(
      [first, laterSameInstance, laterOtherInstance, lowerOtherInstance, ownersOut, aheadBelowOwnersOut],
      ['limited', undefined, undefined, undefined, 'limited', 'limited'],
    );
    assert.deepEqual(limits, ['limit 0.3 1000000 booked_ahead', 'limit 0.2 2000000 billing', 'limit 0.1 1500000 booked_ahead']);
  });
});
