/**
 * A lane's live API: an API Gateway HTTP API with IAM authorization on its three routes
 * (`POST /v1/extractions`, `GET /v1/extractions/{jobId}`, `DELETE /v1/extractions/{jobId}`: the job's
 * owner erases its source), a Lambda proxy integration (payload format 2.0) to the live function, and
 * the default stage with JSON access logs and throttling from the lane config. The live function
 * (`lambdas/live.ts`, bundled like the consumer) has a role with only what it calls on the lane's own
 * resources: documents under `documents/` (read, write, delete an erased source's, and list to confirm
 * one missing), the results, ledger (and its `bySource` index) and rate-state tables,
 * `sqs:SendMessage` on the lane queue (the hand-over of a job that did not finish within its deadline;
 * never the DLQ, never a receive), the provider secret or the lane's Bedrock model.
 *
 * Why an HTTP API rather than a Lambda function URL: a function URL has no stage throttling (only the
 * function's reserved concurrency, which turns excess into 429s without a steady rate and burst), no
 * access log of its own (who called, which route, status and latencies, the caller's IAM identity)
 * and one auth type for the whole URL; the HTTP API throttles at the stage, writes an access log line
 * per request and authorizes each route with IAM (SigV4), for about the same cost.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, type HttpRoute, HttpStage, LogGroupLogDestination, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { BedrockModelTarget, LaneConfig } from '../../config/lanes.js';
import { liveFunctionTimeoutSeconds } from '../../config/live.js';
import { LIVE_ENV } from '../../platform/environment.js';
import { RatelaneError } from '../../platform/errors.js';
import { DOCUMENT_PREFIX, LIVE_ROUTES, liveApiName, liveFunctionName } from '../../platform/resources.js';
import { LEDGER_SOURCE_INDEX } from '../../store/tables.js';
import { liveServiceName, METRICS_NAMESPACE } from '../../platform/telemetry.js';
import { CONSUMER_LOG_ACTIONS, CONSUMER_RATE_STATE_ACTIONS, CONSUMER_SECRET_ACTIONS } from '../consumer.js';
import { acknowledgeDocumentPrefixGrant, grantBedrockInvoke, laneBedrockTarget, laneFunction } from '../lane-function.js';
import type { LaneQueues } from '../queues.js';
import type { LaneStorage } from '../storage.js';

/** API Gateway HTTP APIs end an integration after 30 s (their default and maximum): the live function must time out before. */
export const HTTP_API_INTEGRATION_TIMEOUT_SECONDS = 30;

/** The name of an HTTP API's default stage (served at the API's root URL). */
const DEFAULT_STAGE_NAME = '$default';

/**
 * Documents: read a stored one (GET and the in-request extraction), store an inline one before a hand-over,
 * delete an erased source's (`DELETE`, and a job of an erased source stopped: lib/extraction/erased.ts).
 */
export const LIVE_BUCKET_ACTIONS = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'] as const;
/**
 * Listing under `documents/` only (`s3:prefix`, the condition key S3 documents for ListObjectsV2): a
 * `documentRef` whose read answered 403 is `document_not_found` once a listing with its exact key as
 * prefix shows no such object (lib/lanes/live/document-ref.ts). Nothing relies on S3 applying the
 * condition to the implicit listing check behind a 404 (undocumented): either answer is handled.
 */
export const LIVE_BUCKET_LIST_ACTIONS = ['s3:ListBucket'] as const;
/**
 * Results: read a committed result (`get`), commit once (a conditional `PutItem`, lib/store/results.ts),
 * remove an erased source's result (`DELETE`: `delete`, a `DeleteItem`), and a cancel's check that the job's
 * result is not committed (`ConditionCheckItem`, lib/store/cancellation.ts).
 */
export const LIVE_RESULTS_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'] as const;
/**
 * Ledger (lib/store/ledger.ts): entries (`record`: `PutItem`) and the job claim (`claimJob`: a conditional
 * `UpdateItem`), a job's history for `GET` (`entriesFor`: `Query`) and its claim (`claimOf`: `GetItem`);
 * erasure and cancellation as the consumer has them (a job's tombstone and cancel marker read together at
 * its receive with `BatchGetItem`, their absence as `ConditionCheckItem`s, a stopped job's records removed
 * with `BatchWriteItem`), and a `DELETE`'s erasure (the tombstone's `UpdateItem`, each job's items
 * read with `Query`, removed with `BatchWriteItem`, its marker `PutItem`); never `Scan` (tests only).
 */
export const LIVE_LEDGER_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:Query',
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
] as const;
/** The ledger's `bySource` index (lib/store/tables.ts): a `DELETE` finds the jobs of the source it erases (`jobsOf`). */
export const LIVE_LEDGER_INDEX_ACTIONS = ['dynamodb:Query'] as const;
/** Rate state: the key pool and token buckets, exactly as the consumer uses them. */
export const LIVE_RATE_STATE_ACTIONS = CONSUMER_RATE_STATE_ACTIONS;
/** The hand-over to the lane queue: send only (no receive, delete or visibility change; no DLQ). */
export const LIVE_QUEUE_ACTIONS = ['sqs:SendMessage'] as const;
export const LIVE_SECRET_ACTIONS = CONSUMER_SECRET_ACTIONS;
export const LIVE_LOG_ACTIONS = CONSUMER_LOG_ACTIONS;

/**
 * The access log line of the live API (HTTP API `$context` variables), one JSON object per request:
 * who called (the SigV4 identity), which route, the answer and its latencies, and why API Gateway
 * refused or failed a request. HTTP API access logs cannot carry request or response bodies, and
 * none of these variables holds a header value or the document.
 */
const LIVE_ACCESS_LOG_FIELDS = {
  requestId: '"$context.requestId"',
  requestTime: '"$context.requestTime"',
  httpMethod: '"$context.httpMethod"',
  routeKey: '"$context.routeKey"',
  path: '"$context.path"',
  protocol: '"$context.protocol"',
  status: '"$context.status"',
  responseLength: '"$context.responseLength"',
  responseLatency: '"$context.responseLatency"',
  integrationStatus: '"$context.integrationStatus"',
  integrationLatency: '"$context.integrationLatency"',
  integrationError: '"$context.integrationErrorMessage"',
  // Already a quoted JSON string (quotes in the message are escaped).
  error: '$context.error.messageString',
  sourceIp: '"$context.identity.sourceIp"',
  userAgent: '"$context.identity.userAgent"',
  callerAccount: '"$context.identity.accountId"',
  caller: '"$context.identity.caller"',
  userArn: '"$context.identity.userArn"',
} as const;

/** The access log format string of {@link LIVE_ACCESS_LOG_FIELDS}. */
function liveAccessLogFormat(): string {
  return `{${Object.entries(LIVE_ACCESS_LOG_FIELDS)
    .map(([field, value]) => `"${field}":${value}`)
    .join(',')}}`;
}

/** Raised at synth when a lane's live settings cannot work behind an HTTP API. */
export class LiveSettingsError extends RatelaneError {
  override name = 'LiveSettingsError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/**
 * Refuses live settings whose function timeout (`liveFunctionTimeoutSeconds`: the longest deadline a
 * request may state, plus 2 s) is not below the HTTP API's integration timeout: API Gateway would
 * answer 503 to the caller while the function still works, and the job would be neither answered nor
 * handed over in time.
 *
 * @throws {@link LiveSettingsError}
 */
export function assertLiveTimeout(lane: Pick<LaneConfig, 'name' | 'live'>): void {
  const timeout = liveFunctionTimeoutSeconds(lane.live);
  if (timeout < HTTP_API_INTEGRATION_TIMEOUT_SECONDS) return;
  // The timeout is the deadline rounded up to a second plus 2 s: below 30 s takes at most 27 s of deadline.
  const longest = (HTTP_API_INTEGRATION_TIMEOUT_SECONDS - 3) * 1000;
  throw new LiveSettingsError(
    `lane ${lane.name}: live.maxDeadlineMs ${lane.live.maxDeadlineMs} ms gives the live function a ${timeout} s timeout, not below API Gateway's ${HTTP_API_INTEGRATION_TIMEOUT_SECONDS} s HTTP API integration timeout; lower live.maxDeadlineMs to at most ${longest}`,
  );
}

export interface LaneLiveProps {
  readonly lane: LaneConfig;
  readonly queues: LaneQueues;
  readonly storage: LaneStorage;
  /** Retention of the function's log group and of the API's access logs. */
  readonly logRetention: RetentionDays;
}

/** A lane's live API, its function and the function's role. */
export class LaneLive extends Construct {
  readonly api: HttpApi;
  /** The default stage: access logs and throttling. */
  readonly stage: HttpStage;
  readonly routes: { readonly extractions: HttpRoute; readonly extraction: HttpRoute; readonly erasure: HttpRoute; readonly cancel: HttpRoute };
  readonly function: LambdaFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  /** The API's access log group. */
  readonly accessLogGroup: LogGroup;
  /** What the role may invoke on Bedrock (a Bedrock lane with IAM auth), else undefined. */
  readonly bedrockTarget: BedrockModelTarget | undefined;

  constructor(scope: Construct, id: string, props: LaneLiveProps) {
    super(scope, id);
    const { lane, queues, storage } = props;
    assertLiveTimeout(lane);
    const live = lane.live;

    // Generated names and retained, like the consumer's log group: a fixed name would block the next
    // deploy of the lane after a destroy. The stack's log groups use CloudWatch Logs' own encryption
    // (no customer key), and so do these.
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });
    this.accessLogGroup = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });

    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `ratelane ${lane.name} lane live API function: its own documents, tables, queue (send only) and secret`,
    });

    this.function = laneFunction(this, 'Function', 'live', {
      functionName: liveFunctionName(lane.name),
      description: `ratelane ${lane.name} lane live API (${lane.region})`,
      memorySize: live.memoryMb,
      timeout: Duration.seconds(liveFunctionTimeoutSeconds(live)),
      ...(live.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: live.reservedConcurrency }),
      role: this.role,
      logGroup: this.logGroup,
      environment: {
        [LIVE_ENV.laneConfig]: JSON.stringify(lane),
        [LIVE_ENV.queueUrl]: queues.queue.queueUrl,
        ...(storage.providerSecret ? { [LIVE_ENV.providerSecretArn]: storage.providerSecret.secretArn } : {}),
        [LIVE_ENV.serviceName]: liveServiceName(lane),
        [LIVE_ENV.metricsNamespace]: METRICS_NAMESPACE,
        [LIVE_ENV.logLevel]: 'INFO',
        NODE_OPTIONS: '--enable-source-maps',
      },
    });

    // Grants, one statement per resource, exact actions.
    const grant = (sid: string, actions: readonly string[], resource: string, conditions?: Record<string, unknown>) =>
      this.role.addToPrincipalPolicy(new PolicyStatement({ sid, actions: [...actions], resources: [resource], ...(conditions ? { conditions } : {}) }));
    grant('WriteOwnLogs', LIVE_LOG_ACTIONS, this.logGroup.logGroupArn);
    grant('ReadWriteDocuments', LIVE_BUCKET_ACTIONS, storage.bucket.arnForObjects(`${DOCUMENT_PREFIX}*`));
    grant('ConfirmMissingDocuments', LIVE_BUCKET_LIST_ACTIONS, storage.bucket.bucketArn, { StringLike: { 's3:prefix': `${DOCUMENT_PREFIX}*` } });
    grant('CommitResults', LIVE_RESULTS_ACTIONS, storage.resultsTable.tableArn);
    grant('WriteReadLedger', LIVE_LEDGER_ACTIONS, storage.ledgerTable.tableArn);
    grant('FindJobsOfSource', LIVE_LEDGER_INDEX_ACTIONS, `${storage.ledgerTable.tableArn}/index/${LEDGER_SOURCE_INDEX.name}`);
    grant('ReadWriteRateState', LIVE_RATE_STATE_ACTIONS, storage.rateStateTable.tableArn);
    grant('HandOverToOwnQueue', LIVE_QUEUE_ACTIONS, queues.queue.queueArn);
    if (storage.providerSecret) grant('ReadProviderKeys', LIVE_SECRET_ACTIONS, storage.providerSecret.secretArn);
    this.bedrockTarget = laneBedrockTarget(lane);
    if (this.bedrockTarget) grantBedrockInvoke(this.role, this.bedrockTarget);
    acknowledgeDocumentPrefixGrant(
      this.role,
      storage,
      'Documents are content-addressed (documents/<sha256>.txt): the live function stores a request’s inline document under its hash before handing the job over, reads stored ones, and deletes those of a source its owner erases, so the keys cannot be listed at deploy time; the grant is s3:GetObject, s3:PutObject and s3:DeleteObject only, on the documents/ prefix of this lane’s own bucket.',
    );

    this.api = new HttpApi(this, 'Api', {
      apiName: liveApiName(lane.name),
      description: `ratelane ${lane.name} lane live API (${lane.region}): POST ${LIVE_ROUTES.extractions}, GET and DELETE ${LIVE_ROUTES.extraction}, POST ${LIVE_ROUTES.cancel}; IAM (SigV4) auth`,
      createDefaultStage: false,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: DEFAULT_STAGE_NAME,
      autoDeploy: true,
      throttle: { rateLimit: live.throttle.rateLimit, burstLimit: live.throttle.burstLimit },
      accessLogSettings: { destination: new LogGroupLogDestination(this.accessLogGroup), format: AccessLogFormat.custom(liveAccessLogFormat()) },
    });

    // No timeout set: the integration gets HTTP APIs' default, which is also their maximum (30 s;
    // CDK refuses to state more than 29 s), and the function's timeout is checked to stay below it.
    const integration = new HttpLambdaIntegration('LiveFunction', this.function, { payloadFormatVersion: PayloadFormatVersion.VERSION_2_0 });
    const authorizer = new HttpIamAuthorizer();
    const [extractions] = this.api.addRoutes({ path: LIVE_ROUTES.extractions, methods: [HttpMethod.POST], integration, authorizer });
    const [extraction] = this.api.addRoutes({ path: LIVE_ROUTES.extraction, methods: [HttpMethod.GET], integration, authorizer });
    // The job's owner erases its source: the same IAM authorization as GET; the owner check is the function's (lib/lanes/live/erase.ts).
    const [erasure] = this.api.addRoutes({ path: LIVE_ROUTES.extraction, methods: [HttpMethod.DELETE], integration, authorizer });
    // The job's owner cancels it: the same IAM authorization; the owner check is the function's (lib/lanes/live/cancel.ts).
    const [cancel] = this.api.addRoutes({ path: LIVE_ROUTES.cancel, methods: [HttpMethod.POST], integration, authorizer });
    if (!extractions || !extraction || !erasure || !cancel) throw new LiveSettingsError(`lane ${lane.name}: the live API routes were not created`);
    this.routes = { extractions, extraction, erasure, cancel };
  }

  /** The API's base URL (the default stage). */
  get url(): string {
    return this.stage.url;
  }

  /** The `execute-api:Invoke` ARNs of the three routes on the default stage: what a caller's IAM policy must allow (DELETE only for a caller that erases). */
  get invokeArns(): string[] {
    return [
      this.api.arnForExecuteApi(HttpMethod.POST, LIVE_ROUTES.extractions, DEFAULT_STAGE_NAME),
      this.api.arnForExecuteApi(HttpMethod.GET, `${LIVE_ROUTES.extractions}/*`, DEFAULT_STAGE_NAME),
      this.api.arnForExecuteApi(HttpMethod.DELETE, `${LIVE_ROUTES.extractions}/*`, DEFAULT_STAGE_NAME),
      this.api.arnForExecuteApi(HttpMethod.POST, `${LIVE_ROUTES.extractions}/*/cancel`, DEFAULT_STAGE_NAME),
    ];
  }
}
