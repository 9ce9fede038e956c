/**
 * The lane stack's synth-time sizing warning: a mapping that holds more records than the lane's quota
 * can keep busy is annotated on the consumer (cdk synth prints it); the default lanes are not.
 */
import { describe, it } from 'node:test';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { synthLane } from './support.js';

describe('lane stack sizing warning', () => {
  it('warns on the consumer of a lane whose mapping holds 1000 x 10 records for 500 requests per minute', () => {
    // Prepare + Act
    const { stack } = synthLane('eu', { consumer: { maximumConcurrency: 1000 } });
    // Assess
    Annotations.fromStack(stack).hasWarning(
      '/ratelane-eu/Default/Consumer',
      Match.stringLikeRegexp('lane eu: the event source mapping holds up to 10000 records.*at most 22, or add quota owners'),
    );
  });

  it('stays quiet for the default lane', () => {
    // Prepare + Act
    const { stack } = synthLane('eu', {});
    // Assess
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('event source mapping holds'));
  });
});
