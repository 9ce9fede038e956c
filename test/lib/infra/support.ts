/**
 * What the infra tests share: the lane app built as bin/app.ts builds it (cdk-nag included, bundling
 * skipped) with a concrete account and an alarm e-mail (a lane stack without an alarm destination is
 * refused), single lane stacks for other configs, and readers of the synthesized templates (logical
 * ids, IAM statements, dashboard bodies).
 */
import assert from 'node:assert/strict';
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_LANES, type LaneConfig, type LaneOverride, resolveLanes } from '../../../lib/config/lanes.js';
import type { AlarmDestination } from '../../../lib/infra/alarm-destination.js';
import { buildLaneApp } from '../../../lib/infra/app.js';
import { LaneStack, laneStackName } from '../../../lib/infra/lane-stack.js';

/** Context that skips bundling the consumer (tests read templates only). */
export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/** The address the tests' lane stacks send their alarms to. */
export const ALARM_EMAIL = 'ops@example.com';

/** The tests' lane stacks' alarm destination: {@link ALARM_EMAIL} subscribed to the lane topic. */
export const EMAIL_ALARMS: AlarmDestination = { kind: 'email', addresses: [ALARM_EMAIL] };

/** Context of a lane app in the tests: bundling skipped, alarms to {@link ALARM_EMAIL} (`-c alarmEmail=`). */
export const LANE_APP_CONTEXT = { ...NO_BUNDLING, alarmEmail: ALARM_EMAIL };

/** The account the tests deploy to. */
export const ACCOUNT = '123456789012';

/** One synthesized lane stack. */
export interface Synthesized {
  readonly stack: LaneStack;
  readonly template: Template;
  readonly json: Record<string, any>;
}

/** The default lanes (as configured, before the account is applied). */
export const LANES: readonly LaneConfig[] = Object.values(DEFAULT_LANES);

let defaultLanes: ((lane: Pick<LaneConfig, 'name'>) => Synthesized) | undefined;

/** Both default lane stacks, built once per process with `buildLaneApp` and a concrete account (the test files of this folder share one process). */
export function synthDefaultLanes(): (lane: Pick<LaneConfig, 'name'>) => Synthesized {
  defaultLanes ??= synthesizeDefaultLanes();
  return defaultLanes;
}

function synthesizeDefaultLanes(): (lane: Pick<LaneConfig, 'name'>) => Synthesized {
  const app = new App({ context: { ...LANE_APP_CONTEXT, account: ACCOUNT } });
  const stacks = buildLaneApp(app);
  const synthesized = new Map<string, Synthesized>();
  for (const lane of LANES) {
    const stack = stacks[lane.name];
    assert.ok(stack, `stack of lane ${lane.name}`);
    const template = Template.fromStack(stack);
    synthesized.set(lane.name, { stack, template, json: template.toJSON() });
  }
  return (lane) => {
    const s = synthesized.get(lane.name);
    assert.ok(s, `synthesized lane ${lane.name}`);
    return s;
  };
}

/**
 * One lane stack (in ACCOUNT, the lane's region) from the default config of `name` with `override`, its
 * alarms to {@link EMAIL_ALARMS} unless told otherwise; its app for cdk-nag.
 */
export function synthLane(
  name: string,
  override: LaneOverride,
  options: { account?: string; alarmDestination?: AlarmDestination } = {},
): Synthesized & { app: App } {
  const lane = resolveLanes({ [name]: override })[name];
  assert.ok(lane, `lane ${name}`);
  const app = new App({ context: NO_BUNDLING });
  const stack = new LaneStack(app, laneStackName(lane), {
    lane,
    env: { region: lane.region, account: options.account ?? ACCOUNT },
    alarmDestination: options.alarmDestination ?? EMAIL_ALARMS,
  });
  const template = Template.fromStack(stack);
  return { app, stack, template, json: template.toJSON() };
}

/** The logical id of an L2 construct's CloudFormation resource. */
export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } } | undefined): string {
  assert.ok(construct, 'the construct exists');
  return stack.resolve(stack.getLogicalId(construct.node.defaultChild as CfnElement)) as string;
}

export type Statement = { Sid?: string; Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown; Principal?: unknown };

/** Every statement of every AWS::IAM::Policy attached to the role with this logical id. */
export function roleStatements(json: Synthesized['json'], roleId: string): Statement[] {
  return Object.values<{ Type: string; Properties: { Roles: unknown[]; PolicyDocument: { Statement: Statement[] } } }>(json.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && r.Properties.Roles.some((x: unknown) => JSON.stringify(x) === JSON.stringify({ Ref: roleId })))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}

export const actionsOf = (s: Statement): string[] => (Array.isArray(s.Action) ? s.Action : [s.Action]);

/**
 * What a lane function's active tracing grants its role (CDK's `Tracing.ACTIVE`): X-Ray's trace writes, on
 * `*` (X-Ray scopes them to no resource). As an entry of a test's expected actions by resource.
 */
export const TRACING_GRANT: [string, readonly string[]] = [JSON.stringify('*'), ['xray:PutTraceSegments', 'xray:PutTelemetryRecords']];

/** The union of allowed actions per resource (resource rendered as JSON). */
export function actionsByResource(statements: Statement[]): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const s of statements) {
    assert.equal(s.Effect, 'Allow');
    for (const resource of Array.isArray(s.Resource) ? s.Resource : [s.Resource]) {
      const key = JSON.stringify(resource);
      const set = map.get(key) ?? new Set<string>();
      for (const a of actionsOf(s)) set.add(a);
      map.set(key, set);
    }
  }
  return map;
}

export const getAtt = (id: string, attr = 'Arn') => JSON.stringify({ 'Fn::GetAtt': [id, attr] });
export const ref = (id: string) => JSON.stringify({ Ref: id });
export const sorted = (xs: Iterable<string>) => [...xs].sort();

/** `arn:${Partition}:<rest>` as CDK renders a formatted ARN. */
export function partitionArn(rest: string): { 'Fn::Join': [string, unknown[]] } {
  return { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] };
}

/** Renders an `Fn::Join` of strings and tokens as one string (tokens as `<token>`). */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  assert.ok(join, `expected a string or Fn::Join, got ${JSON.stringify(value)}`);
  return join[1].map((part) => (typeof part === 'string' ? part : '<token>')).join(join[0]);
}

/** The lane's dashboard body, parsed. */
export function dashboardBody(template: Template): { widgets: Array<{ type: string; properties: Record<string, unknown> & { title?: string } }> } {
  const dashboards = Object.values<any>(template.findResources('AWS::CloudWatch::Dashboard'));
  assert.equal(dashboards.length, 1);
  return JSON.parse(joined(dashboards[0]?.Properties.DashboardBody));
}

/** The alarm resources of a template, by AlarmName. */
export function alarmsByName(json: Synthesized['json']): Map<string, Record<string, any>> {
  const map = new Map();
  for (const r of Object.values<{ Type: string; Properties: { AlarmName: string } }>(json.Resources)) {
    if (r.Type === 'AWS::CloudWatch::Alarm') map.set(r.Properties.AlarmName, r.Properties);
  }
  return map;
}

/** The regions a text names (`us-east-1`, `eu-central-1`, ...). */
export function regionsNamed(text: string): Set<string> {
  return new Set(text.match(/\b(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-[a-z]+-\d\b/g) ?? []);
}
