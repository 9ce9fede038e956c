/**
 * Where a lane's alarms go, which every lane stack must be told: a lane paused "waiting for a person"
 * waits for nobody if its alarms reach no one. One of:
 * - `email`: the lane's own topic (`ratelane-<lane>-alarms`, encrypted) with these addresses subscribed
 *   (`-c alarmEmail=`; each address confirms the e-mail AWS sends);
 * - `topic`: an existing SNS topic in the lane's region (`-c <lane>AlarmTopicArn=`, e.g. `usAlarmTopicArn`):
 *   the alarms notify it and the stack creates no topic (CloudWatch alarms notify topics of their own region);
 * - `none`, said explicitly (`-c alarmDestination=none`): the lane's own topic with no subscriber, for
 *   a synth that deploys nothing (CI) or an operator who subscribes to the topic outside the stack.
 * A stack without one is refused at synth with {@link AlarmDestinationError}, saying what to add.
 */
import { Token } from 'aws-cdk-lib';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import type { LaneConfig } from '../config/lanes.js';
import { RatelaneError } from '../platform/errors.js';

/** Where a lane stack's alarms go (see the module's description). */
export type AlarmDestination =
  | { readonly kind: 'email'; readonly addresses: readonly string[] }
  | { readonly kind: 'topic'; readonly topicArn: string }
  | { readonly kind: 'none' };

/** Context: an e-mail address subscribed to every lane's alarm topic. */
export const ALARM_EMAIL_CONTEXT = 'alarmEmail';
/** Context: `none`, said explicitly, for lane topics without a subscriber. */
export const ALARM_DESTINATION_CONTEXT = 'alarmDestination';

/** Context: the existing SNS topic of one lane (`usAlarmTopicArn`, ...): a topic is regional, like the lane. */
export function alarmTopicContextKey(laneName: string): string {
  return `${laneName}AlarmTopicArn`;
}

/** Raised when a lane stack has no alarm destination, or one it cannot use. */
export class AlarmDestinationError extends RatelaneError {
  override name = 'AlarmDestinationError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/** An SNS standard topic's ARN: partition, region, account, name. */
const TOPIC_ARN = /^arn:(aws[a-z-]*):sns:([a-z]{2}(?:-gov)?-[a-z]+-\d):(\d{12}):([A-Za-z0-9_-]{1,256})$/;

/** An e-mail address, loosely (SNS checks it again; a confirmation goes to it). */
const EMAIL = /^[^@\s,;]+@[^@\s,;]+\.[^@\s,;]+$/;

/** The partition of `region` (`aws`, `aws-us-gov`, ...), `aws` when CDK does not know the region. */
function partitionOf(region: string): string {
  return RegionInfo.get(region).partition ?? 'aws';
}

/** What the synth error says when `lane` has no alarm destination: the three ways to give one. */
function missingMessage(lane: Pick<LaneConfig, 'name' | 'region'>): string {
  const topic = `ratelane-${lane.name}-alarms`;
  return [
    `lane ${lane.name} (${lane.region}) has no alarm destination: its alarms would reach no one, and a lane paused for a person (ratelane-${lane.name}-waiting-for-person) would wait for nobody.`,
    `Add one of: -c ${ALARM_EMAIL_CONTEXT}=<address> (subscribes it to the lane's topic ${topic}; confirm the e-mail AWS sends),`,
    `-c ${alarmTopicContextKey(lane.name)}=arn:${partitionOf(lane.region)}:sns:${lane.region}:<account>:<topic> (an existing topic in ${lane.region}; the alarms go there),`,
    `or -c ${ALARM_DESTINATION_CONTEXT}=none (the alarms go to ${topic} with no subscriber: subscribe to it yourself).`,
    `In code: ExtractionLaneProps.alarmDestination (ratelane/cdk). See docs/deploying.md, "Where the alarms go".`,
  ].join(' ');
}

/**
 * The alarm destination of `lane`'s stack, checked: present, e-mail addresses that look like ones, a
 * topic ARN of an SNS topic in the lane's own region and partition.
 *
 * @throws {@link AlarmDestinationError} naming the lane and what to add or change.
 */
export function checkAlarmDestination(lane: Pick<LaneConfig, 'name' | 'region'>, destination: AlarmDestination | undefined): AlarmDestination {
  if (destination === undefined) throw new AlarmDestinationError(missingMessage(lane));
  if (destination.kind === 'email') {
    if (destination.addresses.length === 0) throw new AlarmDestinationError(`lane ${lane.name}: an e-mail alarm destination needs at least one address`);
    const bad = destination.addresses.filter((a) => !EMAIL.test(a));
    if (bad.length > 0) throw new AlarmDestinationError(`lane ${lane.name}: alarm e-mail ${bad.map((a) => `"${a}"`).join(', ')} is not an e-mail address`);
    return destination;
  }
  if (destination.kind === 'none' || Token.isUnresolved(destination.topicArn)) return destination;
  const key = alarmTopicContextKey(lane.name);
  const match = TOPIC_ARN.exec(destination.topicArn);
  if (!match) {
    throw new AlarmDestinationError(
      `lane ${lane.name}: ${key} "${destination.topicArn}" is not an SNS topic ARN (arn:${partitionOf(lane.region)}:sns:${lane.region}:<account>:<topic name>, a standard topic)`,
    );
  }
  const [, partition, region] = match;
  if (region !== lane.region) {
    throw new AlarmDestinationError(
      `lane ${lane.name} lives in ${lane.region}, but ${key} names a topic in ${region}: CloudWatch alarms notify topics of their own region. Give a topic in ${lane.region}`,
    );
  }
  if (partition !== partitionOf(lane.region)) {
    throw new AlarmDestinationError(`lane ${lane.name}: ${key} is in partition ${partition}, but ${lane.region} is in ${partitionOf(lane.region)}`);
  }
  return destination;
}
