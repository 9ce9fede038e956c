/**
 * `ratelane/cdk`: a whole lane in any CDK stack of the lane's region.
 *
 * ```ts
 * const stack = new Stack(app, 'Extraction', { env: { region: 'eu-central-1' } });
 * new ExtractionLane(stack, 'Lane', { lane: { name: 'eu', region: 'eu-central-1' }, alarmDestination: { kind: 'email', addresses: ['ops@example.com'] } });
 * ```
 *
 * Needs `aws-cdk-lib` and `constructs` (peer dependencies). cdk-nag's `AwsSolutionsChecks` pass over
 * the lane with only the acknowledgements it carries (`Validations.of(app).addPlugins(new AwsSolutionsChecks(app))`).
 */
export { ExtractionLane, type ExtractionLaneProps, LaneRegionError } from './infra/extraction-lane.js';
export { LaneStack, laneStackName, type LaneStackProps } from './infra/lane-stack.js';
export { type AlarmDestination, AlarmDestinationError } from './infra/alarm-destination.js';
export { type LaneConfig, LaneConfigError, type LaneInput, resolveLane } from './config/lanes.js';
export { configuredLanes, readLaneConfigFile } from './config/file.js';
