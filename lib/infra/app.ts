/**
 * Builds the CDK app: one {@link LaneStack} per lane of the lane config, each in its own region, and
 * cdk-nag's AwsSolutions checks over all of them. Regions, account and where the alarms go come from
 * CDK context: `-c usRegion=us-west-2 -c euRegion=eu-west-1 -c account=123456789012`, and one alarm
 * destination per lane (required): `-c alarmEmail=ops@example.com` (every lane), `-c usAlarmTopicArn=arn:aws:sns:us-east-1:…`
 * (one lane, a topic of its region) or `-c alarmDestination=none` (every lane, said explicitly).
 */
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configuredLanes } from '../config/file.js';
import { type LaneConfig, type LaneOverride, type LaneSet, resolveLanes } from '../config/lanes.js';
import {
  ALARM_DESTINATION_CONTEXT,
  ALARM_EMAIL_CONTEXT,
  type AlarmDestination,
  AlarmDestinationError,
  alarmTopicContextKey,
  checkAlarmDestination,
} from './alarm-destination.js';
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

/** Context: the lane config file (default `ratelane.config.json` in the working folder, else the built-in lanes). */
const CONFIG_CONTEXT = 'config';

/**
 * A context value that is JSON: as `cdk.json` holds it (an object or array), or as `-c key='<json>'` gives
 * it (a string). `undefined` when unset; the lane schema checks its shape.
 */
function jsonContext(app: App, key: string): unknown {
  const value: unknown = app.node.tryGetContext(key);
  if (typeof value !== 'string') return value ?? undefined;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new AppContextError(`context ${key} must be JSON, got ${JSON.stringify(value.slice(0, 80))}`, { cause: error });
  }
}

/**
 * The lanes of the lane config file (`-c config=<file>`, `RATELANE_CONFIG`, or `ratelane.config.json` in the
 * working folder; none: the built-in lanes), with regions from context (`<lane>Region`, e.g. `usRegion`), the live API's lane-wide
 * readers (`<lane>LiveReaders`: principal ARNs, comma-separated), the producers that may state a
 * job's tenant (`<lane>Producers`: JSON, `[{"senderId":"AROA…","tenants":["team-a"]}]`) and the provider's
 * base URL (`<lane>ProviderBaseUrl`: the synth refuses one not approved for the lane), validated by the lane schema.
 */
export function lanesFromContext(app: App, base: LaneSet = configuredLanes({ path: stringContext(app, CONFIG_CONTEXT) }).lanes): LaneSet {
  const overrides: Record<string, LaneOverride> = {};
  for (const name of Object.keys(base)) {
    const region = stringContext(app, `${name}Region`);
    const readers = stringContext(app, `${name}LiveReaders`)
      ?.split(',')
      .map((arn) => arn.trim())
      .filter((arn) => arn !== '');
    const producers = jsonContext(app, `${name}Producers`) as LaneOverride['producers'];
    const baseUrl = stringContext(app, `${name}ProviderBaseUrl`);
    overrides[name] = {
      ...(region ? { region } : {}),
      ...(readers ? { live: { readers } } : {}),
      ...(producers !== undefined ? { producers } : {}),
      ...(baseUrl !== undefined ? { provider: { baseUrl } } : {}),
    };
  }
  return resolveLanes(overrides, base);
}

/** The deployment account from context (`account`), if any: unset, the stacks stay account-agnostic. */
function accountFromContext(app: App): string | undefined {
  const account = stringContext(app, 'account');
  if (account !== undefined && !/^\d{12}$/.test(account)) throw new AppContextError(`context account must be 12 digits, got "${account}"`);
  return account;
}

/**
 * Where `lane`'s alarms go, from context: `alarmEmail`, `<lane>AlarmTopicArn` or `alarmDestination=none`
 * (at most one applies to a lane); undefined when none is given.
 *
 * @throws {@link AppContextError} for a malformed value; {@link AlarmDestinationError} when two destinations apply to the lane.
 */
function alarmDestinationFromContext(app: App, lane: Pick<LaneConfig, 'name'>): AlarmDestination | undefined {
  if (stringContext(app, 'alarmTopicArn') !== undefined) {
    throw new AppContextError(
      `context alarmTopicArn is not read: a topic is regional, so each lane takes its own (-c ${alarmTopicContextKey(lane.name)}=arn:aws:sns:<lane region>:<account>:<topic>, one per lane)`,
    );
  }
  const email = stringContext(app, ALARM_EMAIL_CONTEXT);
  const topicKey = alarmTopicContextKey(lane.name);
  const topicArn = stringContext(app, topicKey);
  const explicit = stringContext(app, ALARM_DESTINATION_CONTEXT);
  if (explicit !== undefined && explicit !== 'none') {
    throw new AppContextError(
      `context ${ALARM_DESTINATION_CONTEXT} takes only "none", got "${explicit}": for e-mail give -c ${ALARM_EMAIL_CONTEXT}=<address>, for a topic -c ${topicKey}=<topic ARN>`,
    );
  }
  const given = [
    email !== undefined && ALARM_EMAIL_CONTEXT,
    topicArn !== undefined && topicKey,
    explicit !== undefined && `${ALARM_DESTINATION_CONTEXT}=none`,
  ].filter((g): g is string => typeof g === 'string');
  if (given.length > 1) {
    throw new AlarmDestinationError(`lane ${lane.name}: context ${given.join(' and ')} both apply to it, but its alarms go to one destination: keep one`);
  }
  if (email !== undefined) return { kind: 'email', addresses: [email] };
  if (topicArn !== undefined) return { kind: 'topic', topicArn };
  return explicit === 'none' ? { kind: 'none' } : undefined;
}

/** Adds one stack per lane plus cdk-nag; returns the stacks by lane name. */
export function buildLaneApp(app: App, lanes: LaneSet = lanesFromContext(app)): Record<string, LaneStack> {
  const account = accountFromContext(app);
  const stacks: Record<string, LaneStack> = {};
  for (const lane of Object.values(lanes)) {
    // Refused here already, with what to add, when the context gives the lane none.
    const alarmDestination = checkAlarmDestination(lane, alarmDestinationFromContext(app, lane));
    stacks[lane.name] = new LaneStack(app, laneStackName(lane), {
      lane,
      env: { region: lane.region, ...(account ? { account } : {}) },
      alarmDestination,
    });
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stacks;
}
