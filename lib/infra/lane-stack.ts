/**
 * One regional lane as one stack (`ratelane-<lane>`): an {@link ExtractionLane} in a stack of the lane's
 * region, tagged with the lane, as the repository's own app deploys each lane (`app.ts`). The lane's
 * resources keep the logical ids they would have at the stack's top level (the construct's id is
 * `Default`, which CloudFormation ids leave out).
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { LaneConfig } from '../config/lanes.js';
import { ExtractionLane, type ExtractionLaneProps, LaneRegionError } from './extraction-lane.js';

export { LaneRegionError } from './extraction-lane.js';

export interface LaneStackProps extends StackProps, Omit<ExtractionLaneProps, 'lane'> {
  /** The lane this stack deploys (as configured; the stack applies the account); the stack's region must be the lane's region. */
  readonly lane: LaneConfig;
}

/** The stack name of a lane (`ratelane-us`, `ratelane-eu`, ...). */
export function laneStackName(lane: Pick<LaneConfig, 'name'>): string {
  return `ratelane-${lane.name}`;
}

/** A lane's stack: its {@link ExtractionLane}, whose parts it shows as its own. */
export class LaneStack extends Stack {
  readonly extraction: ExtractionLane;

  constructor(scope: Construct, id: string, props: LaneStackProps) {
    const configured = props.lane;
    if (props.env?.region !== undefined && props.env.region !== configured.region) {
      throw new LaneRegionError(`stack ${id} targets ${props.env.region} but lane ${configured.name} lives in ${configured.region}`);
    }
    const { lane, alarmDestination, outputs, ...stackProps } = props;
    super(scope, id, {
      stackName: laneStackName(configured),
      description: `ratelane ${configured.name} lane (${configured.region}): bucket, queues, consumer, tables, secret, alarms, dashboard`,
      ...stackProps,
      env: { ...props.env, region: configured.region },
      tags: { 'ratelane:lane': configured.name, ...props.tags },
    });
    this.extraction = new ExtractionLane(this, 'Default', {
      lane,
      alarmDestination,
      ...(outputs !== undefined ? { outputs } : {}),
    });
  }

  /** The lane as deployed (account-qualified bucket name). */
  get lane(): LaneConfig {
    return this.extraction.lane;
  }
  get storage(): ExtractionLane['storage'] {
    return this.extraction.storage;
  }
  get queues(): ExtractionLane['queues'] {
    return this.extraction.queues;
  }
  get consumer(): ExtractionLane['consumer'] {
    return this.extraction.consumer;
  }
  get live(): ExtractionLane['live'] {
    return this.extraction.live;
  }
  get alarms(): ExtractionLane['alarms'] {
    return this.extraction.alarms;
  }
  get liveAlarms(): ExtractionLane['liveAlarms'] {
    return this.extraction.liveAlarms;
  }
  get batch(): ExtractionLane['batch'] {
    return this.extraction.batch;
  }
  get batchAlarms(): ExtractionLane['batchAlarms'] {
    return this.extraction.batchAlarms;
  }
  get dashboard(): ExtractionLane['dashboard'] {
    return this.extraction.dashboard;
  }
}
