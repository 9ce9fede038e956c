/**
 * Builds the CDK app: one {@link LaneStack} per lane of the lane config, each in its own region, and
 * cdk-nag's AwsSolutions checks over all of them. Regions, account and alarm e-mails come from CDK
 * context: `-c usRegion=us-west-2 -c euRegion=eu-west-1 -c account=123456789012 -c alarmEmail=ops@example.com`.
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { type LaneOverride, type LaneSet, DEFAULT_LANES, resolveLanes } from '../config/lanes.js';
import { LaneStack, laneStackName } from './lane-stack.js';
import { RatelaneError } from '../platform/errors.js';

/** Raised when a context value is malformed. */
export class AppContextError extends RatelaneError {
  override name = 'AppContextError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

function stringContext(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new AppContextError(`context ${key} must be a string, got ${JSON.stringify(value)}`);
  return value;
}

/** The lanes with regions from context (`<lane>Region`, e.g. `usRegion`), validated by the lane schema. */
export function lanesFromContext(app: App, base: LaneSet = DEFAULT_LANES): LaneSet {
  const overrides: Record<string, LaneOverride> = {};
  for (const name of Object.keys(base)) {
    const region = stringContext(app, `${name}Region`);
    if (region) overrides[name] = { region };
  }
  return resolveLanes(overrides, base);
}

/** The deployment account from context (`account`), if any: unset, the stacks stay account-agnostic. */
function accountFromContext(app: App): string | undefined {
  const account = stringContext(app, 'account');
  if (account !== undefined && !/^\d{12}$/.test(account)) throw new AppContextError(`context account must be 12 digits, got "${account}"`);
  return account;
}

/** Adds one stack per lane plus cdk-nag; returns the stacks by lane name. */
export function buildLaneApp(app: App, lanes: LaneSet = lanesFromContext(app)): Record<string, LaneStack> {
  const account = accountFromContext(app);
  const alarmEmail = stringContext(app, 'alarmEmail');
  const stacks: Record<string, LaneStack> = {};
  for (const lane of Object.values(lanes)) {
    stacks[lane.name] = new LaneStack(app, laneStackName(lane), {
      lane,
      env: { region: lane.region, ...(account ? { account } : {}) },
      ...(alarmEmail ? { alarmEmails: [alarmEmail] } : {}),
    });
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stacks;
}
