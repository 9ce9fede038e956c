/**
 * The live lane's infrastructure as CloudFormation: the HTTP API (IAM auth on its four routes, a Lambda
 * proxy integration, the default stage's throttling and JSON access logs), the live function
 * (timeout below the integration's, memory, environment), its role (exact actions on the lane's own
 * resources: send-only on the queue, nothing on the DLQ), region integrity, a lane without the live
 * API, and the synth-time timeout check. Its alarms and dashboard row are in lane-alarms.test.ts,
 * its cdk-nag acknowledgement in nag.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { App } from 'aws-cdk-lib';
import { DEFAULT_LANES, LaneConfigError } from '../../../lib/config/lanes.js';
import { liveFunctionTimeoutSeconds, MAX_LIVE_DEADLINE_MS } from '../../../lib/config/live.js';
import { DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/dashboard.js';
import { LaneStack } from '../../../lib/infra/lane-stack.js';
import {
  assertLiveTimeout,
  HTTP_API_INTEGRATION_TIMEOUT_SECONDS,
  LIVE_BUCKET_ACTIONS,
  LIVE_BUCKET_LIST_ACTIONS,
  LIVE_LEDGER_ACTIONS,
  LIVE_LEDGER_INDEX_ACTIONS,
  LIVE_LOG_ACTIONS,
  LIVE_QUEUE_ACTIONS,
  LIVE_RATE_STATE_ACTIONS,
  LIVE_RESULTS_ACTIONS,
  LIVE_SECRET_ACTIONS,
  LiveSettingsError,
} from '../../../lib/infra/live/live-api.js';
import { LIVE_ENV, LiveEnvironmentSchema } from '../../../lib/platform/environment.js';
import { DOCUMENT_PREFIX, LIVE_ROUTES } from '../../../lib/platform/resources.js';
import { documentKeyFor } from '../../../lib/store/documents.js';
import {
  ACCOUNT,
  actionsByResource,
  actionsOf,
  alarmsByName,
  dashboardBody,
  getAtt,
  LANES,
  logicalId,
  EMAIL_ALARMS,
  NO_BUNDLING,
  ref,
  regionsNamed,
  roleStatements,
  type Synthesized,
  sorted,
  synthDefaultLanes,
  synthLane,
  TRACING_GRANT,
} from './support.js';

// Prepare (shared): both default lane stacks in one synth, one lane with other live settings and a
// Bedrock provider, one lane without the live API.
const of = synthDefaultLanes();
const BEDROCK_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const tuned = synthLane('us', {
  provider: { kind: 'bedrock', model: BEDROCK_MODEL },
  live: { memoryMb: 1024, reservedConcurrency: 7, maxDeadlineMs: 20_000, throttle: { rateLimit: 12, burstLimit: 34 } },
});
// (the batch lane off too: lane-batch.test.ts has a lane with it and without the live API's resources counted here)
const disabled = synthLane('eu', { live: { enabled: false }, batch: { enabled: false } });

const resourcesOfType = (json: Synthesized['json'], type: string) => Object.entries<any>(json.Resources).filter(([, r]) => r.Type === type);
const liveOf = (s: Synthesized) => {
  assert.ok(s.stack.live, 'the lane has the live API');
  return s.stack.live;
};

for (const lane of LANES) {
  const other = LANES.find((l) => l.name !== lane.name);
  assert.ok(other);

  describe(`lane stack ${lane.name} (${lane.region}) live API`, () => {
    it('has an HTTP API with IAM auth on exactly the four routes (POST, GET, DELETE, POST cancel), all to the live function (proxy, payload 2.0)', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const fnId = logicalId(s.stack, live.function);
      const apiId = logicalId(s.stack, live.api);
      // Act
      const apis = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Api');
      const routes = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
      const integrations = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Integration');
      // Assess
      assert.equal(apis.length, 1);
      assert.deepEqual(apis[0]?.[1].Properties.Name, `ratelane-${lane.name}-live`);
      assert.equal(apis[0]?.[1].Properties.ProtocolType, 'HTTP');
      assert.equal(integrations.length, 1);
      const [integrationId, integration] = integrations[0] ?? [];
      assert.deepEqual(integration.Properties, {
        ApiId: { Ref: apiId },
        IntegrationType: 'AWS_PROXY',
        IntegrationUri: { 'Fn::GetAtt': [fnId, 'Arn'] },
        PayloadFormatVersion: '2.0',
      });
      assert.equal(integration.Properties.TimeoutInMillis, undefined, 'the HTTP API default: 30 s, also its maximum');
      assert.deepEqual(
        sorted(routes.map((r) => r.RouteKey)),
        sorted([`POST ${LIVE_ROUTES.extractions}`, `GET ${LIVE_ROUTES.extraction}`, `DELETE ${LIVE_ROUTES.extraction}`, `POST ${LIVE_ROUTES.cancel}`]),
      );
      for (const route of routes) {
        assert.equal(route.AuthorizationType, 'AWS_IAM', `${route.RouteKey} is IAM (SigV4) authorized`);
        assert.equal(route.AuthorizerId, undefined);
        assert.deepEqual(route.ApiId, { Ref: apiId });
        assert.deepEqual(route.Target, { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] });
      }
      // API Gateway may invoke the function for these routes of this API only (one permission per route; GET and DELETE share a path)
      const permissions = resourcesOfType(s.json, 'AWS::Lambda::Permission').map(([, p]) => p.Properties);
      assert.equal(permissions.length, 4);
      for (const p of permissions) {
        assert.deepEqual([p.Action, p.Principal, p.FunctionName], ['lambda:InvokeFunction', 'apigateway.amazonaws.com', { 'Fn::GetAtt': [fnId, 'Arn'] }]);
      }
      assert.deepEqual(
        sorted(permissions.map((p) => JSON.stringify(p.SourceArn))),
        sorted(
          [LIVE_ROUTES.extractions, LIVE_ROUTES.extraction, LIVE_ROUTES.extraction, LIVE_ROUTES.cancel].map((path) =>
            JSON.stringify({
              'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:execute-api:${lane.region}:${s.stack.account}:`, { Ref: apiId }, `/*/*${path}`]],
            }),
          ),
        ),
      );
    });

    it('names the execute-api:Invoke ARNs a caller needs: the four routes on the default stage of this API', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const arn = (rest: string) => ({
        'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:execute-api:${lane.region}:${s.stack.account}:`, { Ref: logicalId(s.stack, live.api) }, rest]],
      });
      // Act
      const arns = live.invokeArns.map((a) => s.stack.resolve(a));
      // Assess
      assert.deepEqual(arns, [
        arn('/$default/POST/v1/extractions'),
        arn('/$default/GET/v1/extractions/*'),
        arn('/$default/DELETE/v1/extractions/*'),
        arn('/$default/POST/v1/extractions/*/cancel'),
      ]);
    });

    it('throttles the default stage from the lane config and writes JSON access logs without bodies to a retained log group', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const accessLogsId = logicalId(s.stack, live.accessLogGroup);
      // Act
      const stages = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Stage').map(([, r]) => r.Properties);
      // Assess
      assert.equal(stages.length, 1);
      const stage = stages[0];
      assert.deepEqual([stage.StageName, stage.AutoDeploy, stage.ApiId], ['$default', true, { Ref: logicalId(s.stack, live.api) }]);
      assert.deepEqual(stage.DefaultRouteSettings, { ThrottlingRateLimit: lane.live.throttle.rateLimit, ThrottlingBurstLimit: lane.live.throttle.burstLimit });
      assert.deepEqual(stage.AccessLogSettings.DestinationArn, { 'Fn::GetAtt': [accessLogsId, 'Arn'] });
      const format: string = stage.AccessLogSettings.Format;
      const line = JSON.parse(format.replace('$context.error.messageString', '"<message>"')) as Record<string, string>;
      assert.equal(line.requestId, '$context.requestId');
      for (const field of ['routeKey', 'status', 'responseLatency', 'integrationLatency', 'integrationError', 'userArn', 'sourceIp']) {
        assert.ok(field in line, `access log has ${field}`);
      }
      assert.doesNotMatch(format, /body|\$input|header|authorization/i, 'no request body, headers or credentials');
      // retained, with a retention, encrypted like the stack's other log groups (CloudWatch Logs' own encryption)
      const logGroup = s.json.Resources[accessLogsId];
      const consumerLogGroup = s.json.Resources[logicalId(s.stack, s.stack.consumer.logGroup)];
      assert.deepEqual(logGroup.Properties, { RetentionInDays: 30 });
      assert.deepEqual(logGroup.Properties, consumerLogGroup.Properties);
      assert.equal(logGroup.DeletionPolicy, 'Retain');
      assert.deepEqual(s.json.Outputs.LiveApiUrl.Value, {
        'Fn::Join': ['', ['https://', { Ref: logicalId(s.stack, live.api) }, `.execute-api.${lane.region}.`, { Ref: 'AWS::URLSuffix' }, '/']],
      });
    });

    it('has the live function: the local bundle of lambdas/live.ts, timeout below the integration timeout, config memory, the live environment', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      // Act
      const fn = s.json.Resources[logicalId(s.stack, live.function)].Properties;
      const consumer = s.json.Resources[logicalId(s.stack, s.stack.consumer.function)].Properties;
      // Assess
      assert.equal(fn.FunctionName, `ratelane-${lane.name}-live`);
      assert.deepEqual([fn.Runtime, fn.Architectures, fn.Handler], [consumer.Runtime, consumer.Architectures, consumer.Handler]);
      assert.equal(fn.Timeout, liveFunctionTimeoutSeconds(lane.live));
      assert.ok(fn.Timeout < HTTP_API_INTEGRATION_TIMEOUT_SECONDS);
      assert.equal(fn.MemorySize, lane.live.memoryMb);
      assert.equal(fn.ReservedConcurrentExecutions, undefined, 'reserved concurrency is opt-in');
      assert.deepEqual(fn.Role, { 'Fn::GetAtt': [logicalId(s.stack, live.role), 'Arn'] });
      assert.deepEqual(fn.LoggingConfig, { LogGroup: { Ref: logicalId(s.stack, live.logGroup) } });
      assert.deepEqual([fn.TracingConfig, consumer.TracingConfig], [{ Mode: 'Active' }, { Mode: 'Active' }], 'X-Ray active tracing, as the consumer');
      const env = fn.Environment.Variables;
      assert.deepEqual(JSON.parse(env[LIVE_ENV.laneConfig]), s.stack.lane, 'the lane as deployed, as the consumer gets it');
      assert.equal(env[LIVE_ENV.laneConfig], consumer.Environment.Variables[LIVE_ENV.laneConfig]);
      assert.deepEqual(env[LIVE_ENV.queueUrl], { Ref: logicalId(s.stack, s.stack.queues.queue) });
      assert.deepEqual(env[LIVE_ENV.providerSecretArn], { Ref: logicalId(s.stack, s.stack.storage.providerSecret) });
      assert.equal(env[LIVE_ENV.serviceName], `ratelane-live-${lane.name}`);
      assert.equal(env[LIVE_ENV.metricsNamespace], 'ratelane');
      assert.equal(env[LIVE_ENV.logLevel], 'INFO');
      assert.deepEqual(
        sorted(Object.keys(env)),
        sorted([
          LIVE_ENV.laneConfig,
          LIVE_ENV.queueUrl,
          LIVE_ENV.providerSecretArn,
          LIVE_ENV.serviceName,
          LIVE_ENV.metricsNamespace,
          LIVE_ENV.logLevel,
          'NODE_OPTIONS',
        ]),
        'no DLQ, no lane-pause variables',
      );
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, typeof v === 'string' ? v : 'https://sqs.example.amazonaws.com/123456789012/q']),
      );
      const parsed = LiveEnvironmentSchema.safeParse(resolved);
      assert.ok(parsed.success, parsed.success ? '' : parsed.error.message);
    });

    it('grants the live function exactly what it calls on its own resources: send-only on the queue, nothing on the DLQ', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const id = (c: { node: { defaultChild?: unknown } } | undefined) => logicalId(s.stack, c);
      const objectsArn = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(s.stack.storage.bucket), 'Arn'] }, '/documents/*']] });
      const sourceIndexArn = JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(s.stack.storage.ledgerTable), 'Arn'] }, '/index/bySource']] });
      // Act
      const statements = roleStatements(s.json, id(live.role));
      const byResource = actionsByResource(statements);
      // Assess
      const expected = new Map<string, readonly string[]>([
        [getAtt(id(live.logGroup)), LIVE_LOG_ACTIONS],
        [objectsArn, LIVE_BUCKET_ACTIONS],
        [getAtt(id(s.stack.storage.bucket)), LIVE_BUCKET_LIST_ACTIONS],
        [getAtt(id(s.stack.storage.resultsTable)), LIVE_RESULTS_ACTIONS],
        [getAtt(id(s.stack.storage.ledgerTable)), LIVE_LEDGER_ACTIONS],
        [sourceIndexArn, LIVE_LEDGER_INDEX_ACTIONS],
        [getAtt(id(s.stack.storage.rateStateTable)), LIVE_RATE_STATE_ACTIONS],
        [getAtt(id(s.stack.queues.queue)), LIVE_QUEUE_ACTIONS],
        [ref(id(s.stack.storage.providerSecret)), LIVE_SECRET_ACTIONS],
        TRACING_GRANT,
      ]);
      assert.deepEqual(sorted(byResource.keys()), sorted(expected.keys()), 'the live role reaches exactly these resources');
      for (const [resource, actions] of expected) assert.deepEqual(sorted(byResource.get(resource) ?? []), sorted(actions), resource);
      assert.deepEqual(LIVE_QUEUE_ACTIONS, ['sqs:SendMessage']);
      assert.deepEqual(sorted(LIVE_BUCKET_ACTIONS), ['s3:DeleteObject', 's3:GetObject', 's3:PutObject']);
      assert.deepEqual(sorted(LIVE_RESULTS_ACTIONS), ['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem']);
      assert.deepEqual(LIVE_LEDGER_INDEX_ACTIONS, ['dynamodb:Query'], 'the source index: read only');
      assert.deepEqual(sorted(LIVE_LEDGER_ACTIONS), [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ]);
      const dlq = getAtt(id(s.stack.queues.deadLetterQueue));
      assert.ok(!JSON.stringify(statements).includes(id(s.stack.queues.deadLetterQueue)), `nothing on the DLQ ${dlq}`);
      const actions = new Set(statements.flatMap(actionsOf));
      for (const forbidden of ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'dynamodb:Scan', 'lambda:UpdateEventSourceMapping']) {
        assert.ok(!actions.has(forbidden), forbidden);
      }
      const listing = statements.find((st) => actionsOf(st).includes('s3:ListBucket'));
      assert.deepEqual(listing?.Condition, { StringLike: { 's3:prefix': 'documents/*' } });
      assert.equal(listing?.Sid, 'ConfirmMissingDocuments', 'the listing that confirms a document missing after a 403');
      assert.ok(!statements.some((st) => actionsOf(st).some((a) => a.startsWith('bedrock:'))), 'the key authenticates the model call');
      const role = s.json.Resources[id(live.role)].Properties;
      assert.deepEqual(role.AssumeRolePolicyDocument.Statement, [
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
      ]);
      assert.equal(role.ManagedPolicyArns, undefined);
    });

    it('lets the live function confirm a missing document: ListBucket on its bucket, only with a prefix under documents/ (what document-ref.ts lists)', () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const bucketArn = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.storage.bucket), 'Arn'] };
      // Act
      const listing = roleStatements(s.json, logicalId(s.stack, live.role)).filter((st) => actionsOf(st).includes('s3:ListBucket'));
      // Assess
      assert.deepEqual(listing, [
        {
          Sid: 'ConfirmMissingDocuments',
          Effect: 'Allow',
          Action: 's3:ListBucket',
          Resource: bucketArn,
          Condition: { StringLike: { 's3:prefix': `${DOCUMENT_PREFIX}*` } },
        },
      ]);
      // The prefix document-ref.ts lists with is the referenced key itself: the condition allows it, and nothing outside documents/.
      const condition = listing[0]?.Condition as { StringLike: Record<string, string> } | undefined;
      const pattern = String(condition?.StringLike['s3:prefix']);
      const literal = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      const allowed = (prefix: string) => new RegExp(`^${pattern.split('*').map(literal).join('.*')}$`).test(prefix);
      assert.equal(allowed(documentKeyFor('a'.repeat(64))), true);
      assert.equal(allowed('batch/b1/output/'), false);
      assert.equal(allowed(''), false);
    });

    it(`names nothing of the ${other.name} lane in the live resources, and no region but its own`, () => {
      // Prepare
      const s = of(lane);
      const live = liveOf(s);
      const liveIds = Object.keys(s.json.Resources).filter((k) => k.startsWith('Live'));
      const text = JSON.stringify(Object.fromEntries(liveIds.map((k) => [k, s.json.Resources[k]])));
      const foreign = [
        other.region,
        `ratelane-${other.name}`,
        `ratelane/${other.name}/`,
        `"lane":"${other.name}"`,
        `live-${other.name}`,
        ...Object.values(other.resources),
      ];
      // Act
      const found = foreign.filter((needle) => text.includes(needle));
      // Assess
      assert.ok(liveIds.length >= 15, `live resources: ${liveIds.join()}`);
      assert.ok(liveIds.includes(logicalId(s.stack, live.api)) && liveIds.includes(logicalId(s.stack, live.function)));
      assert.deepEqual(found, []);
      assert.deepEqual([...regionsNamed(text)], [lane.region]);
      const env = s.json.Resources[logicalId(s.stack, live.function)].Properties.Environment.Variables;
      assert.deepEqual([JSON.parse(env[LIVE_ENV.laneConfig]).name, JSON.parse(env[LIVE_ENV.laneConfig]).region], [lane.name, lane.region]);
      assert.deepEqual([...regionsNamed(JSON.stringify(s.json))], [lane.region], 'the whole template too');
    });
  });
}

describe('live API settings from the lane config', () => {
  it('takes memory, reserved concurrency, timeout and stage throttling from lane.live', () => {
    // Prepare
    const live = liveOf(tuned);
    // Act
    const fn = tuned.json.Resources[logicalId(tuned.stack, live.function)].Properties;
    const stage = resourcesOfType(tuned.json, 'AWS::ApiGatewayV2::Stage')[0]?.[1].Properties;
    // Assess
    assert.deepEqual([fn.MemorySize, fn.ReservedConcurrentExecutions, fn.Timeout], [1024, 7, 22]);
    assert.deepEqual(stage.DefaultRouteSettings, { ThrottlingRateLimit: 12, ThrottlingBurstLimit: 34 });
  });

  it('gives a Bedrock lane (IAM auth) the consumer’s model grant and no secret', () => {
    // Prepare
    const live = liveOf(tuned);
    const bedrockOf = (roleId: string) => roleStatements(tuned.json, roleId).filter((st) => actionsOf(st).some((a) => a.startsWith('bedrock:')));
    // Act
    const liveGrant = bedrockOf(logicalId(tuned.stack, live.role));
    const consumerGrant = bedrockOf(logicalId(tuned.stack, tuned.stack.consumer.role));
    const env = tuned.json.Resources[logicalId(tuned.stack, live.function)].Properties.Environment.Variables;
    // Assess
    assert.equal(liveGrant.length, 1);
    assert.deepEqual(liveGrant, consumerGrant);
    assert.match(JSON.stringify(liveGrant[0]?.Resource), new RegExp(`:bedrock:us-east-1::foundation-model/${BEDROCK_MODEL.replace(/\./g, '\\.')}`));
    assert.equal(env[LIVE_ENV.providerSecretArn], undefined);
    assert.ok(!roleStatements(tuned.json, logicalId(tuned.stack, live.role)).some((st) => actionsOf(st).some((a) => a.startsWith('secretsmanager:'))));
  });

  it('deploys none of it with live.enabled false', () => {
    // Act
    const { stack, json, template } = disabled;
    // Assess
    assert.equal(stack.live, undefined);
    assert.equal(stack.liveAlarms, undefined);
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Route',
      'AWS::ApiGatewayV2::Integration',
      'AWS::ApiGatewayV2::Stage',
      'AWS::Lambda::Permission',
    ]) {
      template.resourceCountIs(type, 0);
    }
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.resourceCountIs('AWS::Logs::LogGroup', 1);
    template.resourceCountIs('AWS::IAM::Role', 2);
    template.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'ratelane-eu-consumer' });
    assert.deepEqual(
      [...alarmsByName(json).keys()].filter((name) => name.includes('-live-')),
      [],
    );
    assert.equal(json.Outputs.LiveApiUrl, undefined);
    assert.deepEqual(
      dashboardBody(template).widgets.map((w) => w.properties.title),
      [...DASHBOARD_WIDGET_TITLES],
    );
    assert.doesNotMatch(JSON.stringify(json), /ratelane-eu-live|"Live[A-Z]/);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { RATELANE_LANE_CONFIG: Match.stringLikeRegexp('"enabled":false') } },
    });
  });

  it('refuses at synth a longest deadline whose function timeout would reach the 30 s integration timeout: the schema names the field, and the deploy check holds for a lane the schema did not check', () => {
    // Prepare: the lane schema caps maxDeadlineMs (MAX_LIVE_DEADLINE_MS); the deploy check tests the timeout itself
    const base = DEFAULT_LANES.us;
    assert.ok(base);
    const tooLong = { ...base, live: { ...base.live, maxDeadlineMs: 28_000 } };
    const message =
      /^lane us: live\.maxDeadlineMs 28000 ms gives the live function a 30 s timeout, not below API Gateway's 30 s HTTP API integration timeout; lower live\.maxDeadlineMs to at most 27000$/;
    // Act / Assess
    assert.throws(
      () =>
        new LaneStack(new App({ context: NO_BUNDLING }), 'TooLong', {
          lane: tooLong,
          env: { region: base.region, account: ACCOUNT },
          alarmDestination: EMAIL_ALARMS,
        }),
      (error: unknown) => error instanceof LaneConfigError && /live\.maxDeadlineMs/.test(error.message) && /27000/.test(error.message),
    );
    assert.throws(
      () => assertLiveTimeout({ name: 'us', live: tooLong.live }),
      (error: unknown) => error instanceof LiveSettingsError && message.test(error.message),
    );
    assert.throws(() => assertLiveTimeout({ name: 'us', live: { ...base.live, maxDeadlineMs: 27_001 } }), LiveSettingsError);
    assert.doesNotThrow(() => assertLiveTimeout({ name: 'us', live: { ...base.live, maxDeadlineMs: MAX_LIVE_DEADLINE_MS } }));
    assert.ok(liveFunctionTimeoutSeconds({ maxDeadlineMs: MAX_LIVE_DEADLINE_MS }) < HTTP_API_INTEGRATION_TIMEOUT_SECONDS, 'the schema’s cap fits');
  });
});
