/**
 * The lane pause in AWS: create a one-time EventBridge Scheduler schedule (`at(...)`, deleted after
 * it ran) whose universal target calls `lambda:UpdateEventSourceMapping` with `Enabled: true`, then
 * disable the lane's event source mapping. The lane limit alike: a schedule that sets the mapping's
 * `ScalingConfig.MaximumConcurrency` back to the lane's, then the lowered one. The schedule comes first: if it cannot be created the lane
 * is not disabled (it must never stay off with nothing to turn it on). The mapping's UUID is read from
 * the SSM parameter the stack writes (the function cannot have it in its environment).
 *
 * The stack grants exactly this: `lambda:UpdateEventSourceMapping` on the lane's mapping,
 * `scheduler:CreateSchedule` in the lane's schedule group, `iam:PassRole` of the scheduler role,
 * `ssm:GetParameter` on the mapping-id parameter (lib/infra/consumer.ts).
 */
import { LambdaClient, UpdateEventSourceMappingCommand } from '@aws-sdk/client-lambda';
import { CreateScheduleCommand, DeleteScheduleCommand, ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { errorName } from '../../platform/errors.js';
import { ScopedAbortHttpHandler } from '../../platform/abort-scope.js';
import { ScopedRetryStrategy } from '../../platform/retry.js';
import type { LanePauseReason } from '../model/store.js';
import type { LaneLimitReason } from '../../policy/index.js';
import { limitedConcurrency, type LanePauseController } from './lane-pause.js';

/** The AWS calls a lane pause makes, as plain functions (tests pass fakes). */
export interface AwsPauseCalls {
  /** The event source mapping's UUID. */
  mappingId(): Promise<string>;
  setMappingEnabled(uuid: string, enabled: boolean): Promise<void>;
  /** Sets the mapping's `ScalingConfig.MaximumConcurrency`. */
  setMappingConcurrency(uuid: string, maximumConcurrency: number): Promise<void>;
  /** Creates a one-time schedule; resolves `false` when one of that name exists already. */
  createResumeSchedule(input: ResumeScheduleInput): Promise<boolean>;
  /** Names of the schedules in the group. */
  listSchedules(group: string): Promise<string[]>;
  deleteSchedule(group: string, name: string): Promise<void>;
}

/** One resume schedule. */
export interface ResumeScheduleInput {
  name: string;
  group: string;
  /** `at(yyyy-mm-ddThh:mm:ss)`, UTC. */
  expression: string;
  roleArn: string;
  /** The universal target's input: `{"UUID": …, "Enabled": true}`. */
  input: string;
  /** The universal target's ARN, in the lane's partition. */
  targetArn: string;
  description: string;
}

/** The universal target that enables the mapping, in `partition` (`aws`, `aws-cn`, `aws-us-gov`). */
function resumeTargetArn(partition: string): string {
  return `arn:${partition}:scheduler:::aws-sdk:lambda:updateEventSourceMapping`;
}

/** The universal target in the commercial partition. */
export const RESUME_TARGET_ARN = resumeTargetArn('aws');

/** The partition an ARN names (`arn:<partition>:…`), `aws` when it names none. */
function partitionOf(arn: string): string {
  const match = /^arn:(aws[a-z-]*):/.exec(arn);
  return match?.[1] ?? 'aws';
}

/** Scheduler's `at()` expression for an instant (UTC, whole seconds, rounded up). */
export function atExpression(instant: Date): string {
  const ms = Math.ceil(instant.getTime() / 1000) * 1000;
  return `at(${new Date(ms).toISOString().slice(0, 19)})`;
}

/** The schedule name of a resume at `until` (unique per resume time, ≤ 64 characters). */
export function resumeScheduleName(lane: string, until: Date, action: 'resume' | 'restore' = 'resume'): string {
  return `${action}-${lane}-${new Date(Math.ceil(until.getTime() / 1000) * 1000).toISOString().slice(0, 19).replace(/[-:]/g, '')}`;
}

/** Options of {@link AwsLanePauseController}. */
export interface AwsLanePauseOptions {
  lane: string;
  calls: AwsPauseCalls;
  scheduleGroup: string;
  schedulerRoleArn: string;
  /** A resume is never scheduled sooner than this from now (Scheduler's clock and ours differ). Default 60 s. */
  minimumPauseMs?: number;
  /** The mapping's configured maximum concurrency (`consumer.maximumConcurrency`): what a limit lowers and its end restores. */
  maximumConcurrency: number;
  now?: () => number;
}

/** Pauses a lane by disabling its event source mapping until a scheduled re-enable. */
export class AwsLanePauseController implements LanePauseController {
  constructor(private readonly options: AwsLanePauseOptions) {}

  async pause(until: Date, reason: LanePauseReason): Promise<void> {
    const uuid = await this.schedule('resume', until, { Enabled: true }, `resume after ${reason}`);
    await this.options.calls.setMappingEnabled(uuid, false);
  }

  /** Lowers the mapping's maximum concurrency to `share` of the lane's ({@link limitedConcurrency}) until `until`. */
  async limit(share: number, until: Date, reason: LaneLimitReason): Promise<void> {
    const full = this.options.maximumConcurrency;
    const uuid = await this.schedule('restore', until, { ScalingConfig: { MaximumConcurrency: full } }, `restore concurrency ${full} after ${reason}`);
    await this.options.calls.setMappingConcurrency(uuid, limitedConcurrency(full, share));
  }

  /** Creates the one-time schedule that updates the mapping with `update` at `until` (at the earliest `minimumPauseMs` from now); the mapping's UUID. */
  private async schedule(action: 'resume' | 'restore', until: Date, update: Record<string, unknown>, what: string): Promise<string> {
    const { calls, lane } = this.options;
    const now = (this.options.now ?? Date.now)();
    const at = new Date(Math.max(until.getTime(), now + (this.options.minimumPauseMs ?? 60_000)));
    const uuid = await calls.mappingId();
    await calls.createResumeSchedule({
      name: resumeScheduleName(lane, at, action),
      group: this.options.scheduleGroup,
      expression: atExpression(at),
      roleArn: this.options.schedulerRoleArn,
      input: JSON.stringify({ UUID: uuid, ...update }),
      // The role is the stack's, in the stack's partition: the target lives there too.
      targetArn: resumeTargetArn(partitionOf(this.options.schedulerRoleArn)),
      description: `ratelane ${lane}: ${what} (at ${new Date(now).toISOString()})`,
    });
    return uuid;
  }

  /** Enables the mapping at the lane's whole maximum concurrency. */
  async resume(): Promise<void> {
    const { calls } = this.options;
    const uuid = await calls.mappingId();
    await calls.setMappingEnabled(uuid, true);
    await calls.setMappingConcurrency(uuid, this.options.maximumConcurrency);
  }
}

/** {@link AwsPauseCalls} with the AWS SDK, in one region. */
export function sdkPauseCalls(options: { region: string; mappingIdParameter: string }): AwsPauseCalls {
  // The SDK's standard retries within the record's time, as every AWS client of ratelane (`retry.ts`); calls honour the record's abort scope.
  const config = () => ({ region: options.region, retryStrategy: new ScopedRetryStrategy(), requestHandler: new ScopedAbortHttpHandler() });
  const lambda = new LambdaClient(config());
  const scheduler = new SchedulerClient(config());
  const ssm = new SSMClient(config());
  let uuid: Promise<string> | undefined;
  return {
    mappingId() {
      uuid ??= ssm.send(new GetParameterCommand({ Name: options.mappingIdParameter })).then(
        (out) => {
          const value = out.Parameter?.Value;
          if (!value) throw new Error(`SSM parameter ${options.mappingIdParameter} has no value`);
          return value;
        },
        (error: unknown) => {
          uuid = undefined;
          throw error;
        },
      );
      return uuid;
    },
    async setMappingEnabled(id, enabled) {
      await lambda.send(new UpdateEventSourceMappingCommand({ UUID: id, Enabled: enabled }));
    },
    async setMappingConcurrency(id, maximumConcurrency) {
      await lambda.send(new UpdateEventSourceMappingCommand({ UUID: id, ScalingConfig: { MaximumConcurrency: maximumConcurrency } }));
    },
    async createResumeSchedule(input) {
      try {
        await scheduler.send(
          new CreateScheduleCommand({
            Name: input.name,
            GroupName: input.group,
            ScheduleExpression: input.expression,
            ScheduleExpressionTimezone: 'UTC',
            FlexibleTimeWindow: { Mode: 'OFF' },
            ActionAfterCompletion: 'DELETE',
            Description: input.description,
            Target: {
              Arn: input.targetArn,
              RoleArn: input.roleArn,
              Input: input.input,
              RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
            },
          }),
        );
        return true;
      } catch (error) {
        if (errorName(error) === 'ConflictException') return false;
        throw error;
      }
    },
    async listSchedules(group) {
      const names: string[] = [];
      let token: string | undefined;
      do {
        const out = await scheduler.send(new ListSchedulesCommand({ GroupName: group, ...(token ? { NextToken: token } : {}) }));
        for (const s of out.Schedules ?? []) if (s.Name) names.push(s.Name);
        token = out.NextToken;
      } while (token);
      return names;
    },
    async deleteSchedule(group, name) {
      try {
        await scheduler.send(new DeleteScheduleCommand({ GroupName: group, Name: name }));
      } catch (error) {
        if (errorName(error) !== 'ResourceNotFoundException') throw error;
      }
    },
  };
}
