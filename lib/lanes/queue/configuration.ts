/**
 * When the lane's configuration cannot work — its provider secret is unset (a new stack's secret holds
 * a generated password until `put-secret-value`), not JSON, or lacks a key — no job is failed for it:
 * the consumer logs what to put in the secret, counts `ConfigurationError`, reports the lane as waiting
 * for a person, pauses the lane (reason `configuration`) until the re-check, and sends every record of
 * the batch back unchanged to come back after the re-check (a new message: no retry is spent). When the
 * re-check finds the secret right, the lane runs again.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { liftReplacedAuthCooldowns, ProviderSecretError, type ProviderKeyRing } from '../../admission/keys/key-ring.js';
import type { RateStateStore } from '../../admission/model/store.js';
import { count, log } from '../../extraction/index.js';
import { resendUnchanged } from './reschedule.js';
import { errorName } from '../../platform/errors.js';
import { releaseOriginal, type QueueLaneDeps } from './queue-executor.js';

/** Says what is wrong with the lane's configuration before a batch is taken on, or `undefined` when it can work. */
export type ConfigurationCheck = () => Promise<string | undefined>;

/**
 * The check of a lane whose keys come from a secret: reads it (`readSecret`, cached by its caller for
 * its `maxAge`), sets the keys' secrets, and lifts the `auth` cooldown of a key whose secret was
 * replaced. A secret that is not usable is a configuration problem; failing to read it is not (it
 * throws, and the batch comes back as usual).
 */
export function providerSecretCheck(options: {
  ring: ProviderKeyRing;
  readSecret: () => Promise<unknown>;
  store?: Pick<RateStateStore, 'readCooldowns' | 'deleteCooldown'> | undefined;
  onLifted?: ((keyIds: string[]) => void) | undefined;
}): ConfigurationCheck {
  return async () => {
    let changed: string[];
    try {
      changed = options.ring.update(await options.readSecret());
    } catch (error) {
      if (error instanceof ProviderSecretError) return error.message;
      throw error;
    }
    if (changed.length > 0 && options.store) {
      const lifted = await liftReplacedAuthCooldowns(options.store, options.ring.keys).catch(() => []);
      if (lifted.length > 0) options.onLifted?.(lifted);
    }
    return undefined;
  };
}

/** The re-check interval of a lane paused for its configuration (s): the lane's throttle cap, at most SQS's 900 s. */
function configurationRecheckSeconds(deps: Pick<QueueLaneDeps, 'lane'>): number {
  return Math.min(900, Math.max(1, Math.ceil(deps.lane.backoff.throttleCapSeconds)));
}

/** Pauses the lane for its configuration and sends the batch back unchanged; only records whose re-send failed fail. */
export async function pauseForConfiguration(event: SQSEvent, deps: QueueLaneDeps, problem: string): Promise<SQSBatchResponse> {
  const recheckSeconds = configurationRecheckSeconds(deps);
  const ids = deps.lane.provider.keys.map((k) => k.id).join(', ');
  count(deps, 'ConfigurationError');
  deps.metrics.addMetric('LaneWaitingForPerson', MetricUnit.Count, 1);
  log(deps, 'error', 'lane paused: its configuration is not usable', {
    lane: deps.lane.name,
    outcome: 'configuration',
    reason: 'configuration',
    detail: `${problem}. Put a JSON object {"<key id>": "<api key>"} with the key ids ${ids} into the lane's provider secret (aws secretsmanager put-secret-value); the lane re-checks every ${recheckSeconds} s`,
  });
  if (deps.lanePause) {
    try {
      if (await deps.lanePause.requestPause(new Date(deps.now().getTime() + recheckSeconds * 1000), 'configuration')) count(deps, 'LanePaused');
    } catch (error) {
      log(deps, 'error', 'could not pause the lane', { lane: deps.lane.name, reason: 'configuration', error: errorName(error) });
    }
  }
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      try {
        await resendUnchanged({
          sqs: deps.sqs,
          queueUrl: deps.queueUrl,
          body: record.body,
          attributes: record.messageAttributes,
          delaySeconds: recheckSeconds,
        });
      } catch (error) {
        failures.push({ itemIdentifier: record.messageId });
        count(deps, 'RecordFailed');
        count(deps, 'RecordFailedResend');
        log(deps, 'error', 'record failed: SQS brings it back', {
          lane: deps.lane.name,
          messageId: record.messageId,
          reason: 'resend_failed',
          error: errorName(error),
        });
        return;
      }
      // Re-sent: the original must not come back beside it, even if this invocation dies now.
      await releaseOriginal(deps, record);
    }),
  );
  return { batchItemFailures: failures };
}
