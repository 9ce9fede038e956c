/**
 * The lane stacks' alarms and dashboard: every alarm on the lane's encrypted topic with config
 * thresholds, the job-age alarm beside SQS's message age, the waiting-for-person alarm that holds
 * while a lane waits for a person, the consumer's errors, throttles and record failures, the live
 * API's answer time, server errors, pending share and late answers, the batch lane's (their metrics
 * in lane-batch.test.ts), and a dashboard that shows all of them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Match } from 'aws-cdk-lib/assertions';
import { BATCH_DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/batch/dashboard.js';
import { DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/dashboard.js';
import { LIVE_DASHBOARD_WIDGET_TITLES } from '../../../lib/infra/live/dashboard.js';
import { liveDimensions, RECORD_FAILED_METRICS, RECORD_FAILURE_REASONS } from '../../../lib/platform/telemetry.js';
import { ACCOUNT, actionsOf, alarmsByName, dashboardBody, LANES, logicalId, type Statement, sorted, synthDefaultLanes, synthLane } from './support.js';

// Prepare (shared): one app, both stacks, one synth.
const of = synthDefaultLanes();

const ALARM_SUFFIXES = [
  '429-share',
  'admission-denial-share',
  'billing',
  'consumer-errors',
  'consumer-throttles',
  'dlq-messages',
  'endpoint-mismatch',
  'key-auth',
  'oldest-job-age',
  'oldest-message-age',
  'provider-limits-below-config',
  'record-failures',
  'region-mismatch',
  'waiting-for-person',
  // the live API's (lane-live.test.ts checks their metrics)
  'live-api-5xx',
  'live-latency-p95',
  'live-over-deadline',
  'live-pending-share',
  'live-server-errors',
  'live-throttles',
  // the batch lane's (lane-batch.test.ts checks their metrics)
  'batch-age',
  'batch-reconciler-errors',
  'batch-reconciler-stalled',
  'batch-sweep-errors',
  'batch-unresolved',
];

for (const lane of LANES) {
  const liveDims = Object.entries(liveDimensions(lane))
    .map(([Name, Value]) => ({ Name, Value }))
    .sort((a, b) => a.Name.localeCompare(b.Name));
  const dims = [
    { Name: 'lane', Value: lane.name },
    { Name: 'region', Value: lane.region },
    { Name: 'service', Value: `ratelane-consumer-${lane.name}` },
  ];

  describe(`lane stack ${lane.name} (${lane.region}) alarms and dashboard`, () => {
    it('sends alarms to an encrypted, TLS-only topic CloudWatch may publish to', () => {
      // Prepare
      const { stack, template, json } = of(lane);
      const topicId = logicalId(stack, stack.alarms.topic);
      const keyId = logicalId(stack, stack.alarms.topicKey);
      // Act
      const topic = json.Resources[topicId].Properties;
      const key = json.Resources[keyId].Properties;
      // Assess
      assert.deepEqual(topic.KmsMasterKeyId, { 'Fn::GetAtt': [keyId, 'Arn'] });
      assert.equal(topic.TopicName, `ratelane-${lane.name}-alarms`);
      assert.equal(key.EnableKeyRotation, true);
      const alarmSource = {
        ArnLike: {
          'aws:SourceArn': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:cloudwatch:${lane.region}:${ACCOUNT}:alarm:ratelane-${lane.name}-*`]] },
        },
      };
      assert.ok(
        key.KeyPolicy.Statement.some(
          (s: Statement) =>
            JSON.stringify(s.Principal) === JSON.stringify({ Service: 'cloudwatch.amazonaws.com' }) &&
            sorted(actionsOf(s)).join() === 'kms:Decrypt,kms:GenerateDataKey*' &&
            JSON.stringify(s.Condition) === JSON.stringify({ StringEquals: { 'aws:SourceAccount': ACCOUNT }, ...alarmSource }),
        ),
        'the key lets CloudWatch (this lane’s alarms) encrypt for the topic',
      );
      template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        Topics: [{ Ref: topicId }],
        PolicyDocument: {
          Statement: [
            Match.objectLike({ Effect: 'Deny', Action: 'sns:Publish', Principal: '*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            Match.objectLike({
              Effect: 'Allow',
              Action: 'sns:Publish',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Condition: { StringEquals: { 'aws:SourceAccount': ACCOUNT }, ...alarmSource },
            }),
          ],
        },
      });
    });

    it('has exactly these alarms, each on the lane topic: states notify on ALARM and OK, events on ALARM only', () => {
      // Prepare
      const { stack, json } = of(lane);
      const topic = { Ref: logicalId(stack, stack.alarms.topic) };
      // Act
      const alarms = alarmsByName(json);
      // Assess
      assert.deepEqual(sorted(alarms.keys()), ALARM_SUFFIXES.map((s) => `ratelane-${lane.name}-${s}`).sort());
      for (const [name, alarm] of alarms) {
        const event = /-(region-mismatch|endpoint-mismatch|key-auth|billing|live-over-deadline)$/.test(name);
        assert.deepEqual(alarm.AlarmActions, [topic], name);
        assert.deepEqual(alarm.OKActions, event ? undefined : [topic], `${name}: ${event ? 'an event, no OK a minute later' : 'a state, OK when it ends'}`);
        assert.ok(alarm.AlarmDescription.length > 40, `${name} says what happened and what to do`);
      }
    });

    it('alarms on the SQS message age, DLQ depth, region mismatch, 429 share and provider limits below the config, with config thresholds', () => {
      // Prepare
      const { stack, json } = of(lane);
      // Act
      const alarms = alarmsByName(json);
      const get = (suffix: string) => alarms.get(`ratelane-${lane.name}-${suffix}`);
      // Assess
      const { AlarmActions: _actions, OKActions: _ok, AlarmDescription: _description, ...messageAge } = get('oldest-message-age') ?? {};
      assert.deepEqual(messageAge, {
        AlarmName: `ratelane-${lane.name}-oldest-message-age`,
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.queues.queue), 'QueueName'] } }],
        Statistic: 'Maximum',
        Period: 60,
        Threshold: lane.alarms.oldestMessageAgeSeconds,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 5,
        DatapointsToAlarm: 5,
        TreatMissingData: 'notBreaching',
      });
      assert.equal(get('dlq-messages')?.MetricName, 'ApproximateNumberOfMessagesVisible');
      assert.deepEqual(get('dlq-messages')?.Dimensions, [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [logicalId(stack, stack.queues.deadLetterQueue), 'QueueName'] } },
      ]);
      assert.equal(get('dlq-messages')?.Threshold, 0);
      assert.deepEqual(
        [get('region-mismatch')?.Namespace, get('region-mismatch')?.MetricName, get('region-mismatch')?.Statistic, get('region-mismatch')?.Threshold],
        ['ratelane', 'RegionMismatch', 'Sum', 0],
      );
      assert.deepEqual(get('region-mismatch')?.Dimensions, dims);
      const endpoint = get('endpoint-mismatch');
      assert.deepEqual(
        endpoint?.Metrics.map(
          (m: { Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: Array<{ Name: string; Value: string }> }; Stat: string } }) =>
            m.Expression ??
            `${m.MetricStat?.Metric.MetricName}/${m.MetricStat?.Stat}/${m.MetricStat?.Metric.Dimensions.find((d) => d.Name === 'service')?.Value}`,
        ),
        [
          'FILL(queue, 0) + FILL(live, 0) + FILL(batch, 0)',
          `EndpointMismatch/Sum/ratelane-consumer-${lane.name}`,
          `EndpointMismatch/Sum/ratelane-live-${lane.name}`,
          `EndpointMismatch/Sum/ratelane-batch-${lane.name}`,
        ],
        'jobs and batches kept from an unapproved endpoint, by any of the three functions',
      );
      assert.equal(endpoint?.Threshold, 0);
      const denials = get('admission-denial-share');
      assert.deepEqual(
        [denials?.Threshold, denials?.EvaluationPeriods, denials?.DatapointsToAlarm, denials?.TreatMissingData],
        [lane.alarms.admissionDenialSharePercent, 6, 6, 'notBreaching'],
      );
      assert.deepEqual(
        denials?.Metrics.map(
          (m: { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string }; Period: number; Stat: string } }) =>
            m.Expression ?? `${m.Id}=${m.MetricStat?.Metric.MetricName}/${m.MetricStat?.Period}/${m.MetricStat?.Stat}`,
        ),
        [
          '100 * FILL(admissionDenied, 0) / (FILL(admissionDenied, 0) + FILL(modelCalls, 0))',
          'admissionDenied=AdmissionDenied/300/Sum',
          'modelCalls=ModelCalls/300/Sum',
        ],
      );
      const providerLimits = get('provider-limits-below-config');
      assert.deepEqual(
        [providerLimits?.Threshold, providerLimits?.EvaluationPeriods, providerLimits?.DatapointsToAlarm, providerLimits?.TreatMissingData],
        [0, 3, 3, 'notBreaching'],
        'answers stating lower limits in 3 consecutive 5-minute periods',
      );
      assert.deepEqual(
        [providerLimits?.MetricName, providerLimits?.Period, providerLimits?.Statistic, providerLimits?.Dimensions],
        ['ProviderLimitsBelowConfig', 300, 'Sum', dims],
      );
      assert.match(
        providerLimits?.AlarmDescription ?? '',
        new RegExp(`provider\\.limits: ${lane.provider.limits.requestsPerMinute} requests`),
        'names the configured figures',
      );
      const share = get('429-share');
      assert.equal(share?.Threshold, lane.alarms.throttleSharePercent);
      assert.deepEqual(share?.Metrics, [
        { Id: 'expr_1', Expression: '100 * FILL(rateLimited, 0) / modelCalls', ReturnData: true, Label: share?.Metrics[0].Label },
        {
          Id: 'rateLimited',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'RateLimited', Dimensions: dims }, Period: 300, Stat: 'Sum' },
        },
        {
          Id: 'modelCalls',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'ModelCalls', Dimensions: dims }, Period: 300, Stat: 'Sum' },
        },
      ]);
    });

    it('alarms on the age of the oldest job (across re-sends), beside the SQS message age, with the lane threshold', () => {
      // Prepare
      const { json } = of(lane);
      // Act
      const alarm = alarmsByName(json).get(`ratelane-${lane.name}-oldest-job-age`);
      // Assess
      assert.ok(alarm, 'a job-age alarm per lane');
      assert.deepEqual(
        [alarm.Namespace, alarm.MetricName, alarm.Dimensions, alarm.Statistic, alarm.Period],
        ['ratelane', 'OldestJobAgeMs', dims, 'Maximum', 900],
        'the maximum the consumers saw, over 15 minutes (a waiting job hops at least every 900 s)',
      );
      assert.equal(alarm.Threshold, lane.alarms.oldestJobAgeSeconds * 1000, 'milliseconds, from alarms.oldestJobAgeSeconds');
      assert.equal(alarm.ComparisonOperator, 'GreaterThanThreshold');
      assert.equal(alarm.EvaluationPeriods, 1);
      assert.equal(alarm.TreatMissingData, 'notBreaching', 'no invocation is no old job: an idle lane clears it');
    });

    it('holds the waiting-for-person alarm for as long as the lane waits for a person (billing, auth, secret unset): no count alarm that clears itself', () => {
      // Prepare
      const { json } = of(lane);
      const alarms = alarmsByName(json);
      // Act
      const waiting = alarms.get(`ratelane-${lane.name}-waiting-for-person`);
      // Assess
      assert.ok(waiting);
      assert.deepEqual(
        [waiting.Namespace, waiting.MetricName, waiting.Dimensions, waiting.Statistic, waiting.Period],
        ['ratelane', 'LaneWaitingForPerson', dims, 'Maximum', 60],
      );
      assert.equal(waiting.ComparisonOperator, 'GreaterThanOrEqualToThreshold');
      assert.equal(waiting.Threshold, 1);
      assert.equal(waiting.EvaluationPeriods, 1);
      assert.equal(waiting.TreatMissingData, 'ignore', 'a paused lane emits nothing: missing data keeps the ALARM state');
      // it names every cause a person can fix, the secret before it is set (ConfigurationError) first
      assert.match(waiting.AlarmDescription, new RegExp(`secret ${lane.resources.providerSecretName} is unset or malformed \\(ConfigurationError`));
      assert.match(waiting.AlarmDescription, /AuthAlarm/);
      assert.match(waiting.AlarmDescription, /BillingAlarm/);
      // no count alarm that would go back to OK a minute into a pause
      assert.equal(alarms.get(`ratelane-${lane.name}-billing-pause`), undefined);
      for (const suffix of ['billing', 'key-auth']) {
        const event = alarms.get(`ratelane-${lane.name}-${suffix}`);
        assert.equal(event?.OKActions, undefined, `${suffix} never e-mails OK`);
        assert.equal(event?.Statistic, 'Sum');
      }
      assert.equal(alarms.get(`ratelane-${lane.name}-billing`)?.MetricName, 'BillingAlarm');
      assert.equal(alarms.get(`ratelane-${lane.name}-key-auth`)?.MetricName, 'AuthAlarm');
    });

    it('alarms on the consumer function errors and throttles, and on records that keep failing', () => {
      // Prepare
      const { stack, json } = of(lane);
      const fn = [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, stack.consumer.function) } }];
      const alarms = alarmsByName(json);
      // Act
      const errors = alarms.get(`ratelane-${lane.name}-consumer-errors`);
      const throttles = alarms.get(`ratelane-${lane.name}-consumer-throttles`);
      const failures = alarms.get(`ratelane-${lane.name}-record-failures`);
      // Assess
      assert.deepEqual(
        [errors?.Namespace, errors?.MetricName, errors?.Dimensions, errors?.Statistic, errors?.Threshold],
        ['AWS/Lambda', 'Errors', fn, 'Sum', 0],
      );
      assert.deepEqual(
        [throttles?.Namespace, throttles?.MetricName, throttles?.Dimensions, throttles?.Statistic, throttles?.Threshold],
        ['AWS/Lambda', 'Throttles', fn, 'Sum', 0],
      );
      assert.deepEqual(
        [failures?.Namespace, failures?.MetricName, failures?.Dimensions, failures?.Statistic, failures?.Period, failures?.Threshold],
        ['ratelane', 'RecordFailed', dims, 'Sum', 300, 0],
      );
      assert.deepEqual([failures?.EvaluationPeriods, failures?.DatapointsToAlarm], [3, 3], 'failing for 15 minutes, not one provider blip');
    });

    it('has a dashboard with both ages, depth, completions, 429 share, completion age, failures, the function, waits, attempts, duplicates, validation', () => {
      // Prepare
      const { template } = of(lane);
      // Act
      const body = dashboardBody(template);
      const titles = body.widgets.map((w) => w.properties.title);
      const metricsOf = (title: string) => JSON.stringify(body.widgets.find((w) => w.properties.title === title)?.properties.metrics);
      // Assess
      assert.deepEqual(
        titles,
        [...DASHBOARD_WIDGET_TITLES, ...LIVE_DASHBOARD_WIDGET_TITLES, ...BATCH_DASHBOARD_WIDGET_TITLES],
        'the live API row, then the batch row',
      );
      assert.equal(body.widgets[0]?.type, 'alarm');
      assert.equal((body.widgets[0]?.properties.alarms as unknown[] | undefined)?.length, ALARM_SUFFIXES.length);
      assert.match(metricsOf('Age: oldest message vs oldest job (s)'), /ApproximateAgeOfOldestMessage.*"OldestJobAgeMs".*"stat":"Maximum"/);
      assert.match(metricsOf('Age: oldest message vs oldest job (s)'), /oldestJobAgeMs_Maximum \/ 1000/);
      assert.match(metricsOf('Queue depth'), /ApproximateNumberOfMessagesVisible.*ApproximateNumberOfMessagesNotVisible.*ApproximateNumberOfMessagesDelayed/);
      assert.match(metricsOf('Completions'), /"Completed"/);
      assert.match(metricsOf('429 share (%)'), /100 \* FILL\(rateLimited, 0\) \/ modelCalls/);
      assert.match(metricsOf('429 share (%)'), /"RateLimited".*"RateCut".*"ProviderLimitsBelowConfig"/);
      assert.match(metricsOf('Job age at completion (s)'), /"JobAgeAtCompletionMs".*"p50".*"p95".*"Maximum"/);
      assert.match(metricsOf('Record failures by reason'), /"RecordFailed"/);
      for (const reason of RECORD_FAILURE_REASONS) assert.ok(metricsOf('Record failures by reason').includes(`"${RECORD_FAILED_METRICS[reason]}"`), reason);
      assert.match(metricsOf('Consumer function'), /"AWS\/Lambda","Errors".*"AWS\/Lambda","Throttles"/);
      assert.match(metricsOf('Deferrals'), /"Deferred".*"EligibilityHops".*"InvocationDeadlineDeferred"/);
      assert.match(metricsOf('Deferrals'), /100 \* FILL\(admissionDenied, 0\) \/ \(FILL\(admissionDenied, 0\) \+ FILL\(modelCalls, 0\)\).*"yAxis":"right"/);
      assert.match(metricsOf('Waiting for a person'), /"LaneWaitingForPerson".*"ConfigurationError".*"AuthAlarm".*"BillingAlarm"/);
      assert.match(metricsOf('Attempts per completion'), /"AttemptsPerCompletion"/);
      assert.match(metricsOf('Duplicates suppressed'), /"DuplicateSuppressed"/);
      assert.match(metricsOf('Validation failures'), /"ValidationFailed"/);
      for (const w of body.widgets.filter((x) => x.properties.region)) assert.equal(w.properties.region, lane.region);
      const annotations = JSON.stringify(body.widgets[1]?.properties.annotations);
      assert.match(annotations, new RegExp(`"value":${lane.alarms.oldestMessageAgeSeconds}.*"value":${lane.alarms.oldestJobAgeSeconds}`));
    });

    it('alarms on p95 answer time, server errors (function and API), pending share and late answers, on the lane topic', () => {
      // Prepare
      const s = of(lane);
      const live = s.stack.live;
      assert.ok(live);
      const topic = [{ Ref: logicalId(s.stack, s.stack.alarms.topic) }];
      const alarms = alarmsByName(s.json);
      const get = (suffix: string) => {
        const alarm = alarms.get(`ratelane-${lane.name}-live-${suffix}`);
        assert.ok(alarm, suffix);
        return alarm;
      };
      // Act
      const latency = get('latency-p95');
      const serverErrors = get('server-errors');
      const api5xx = get('api-5xx');
      const pending = get('pending-share');
      const late = get('over-deadline');
      // Assess
      assert.deepEqual(
        [latency.Namespace, latency.MetricName, latency.Dimensions, latency.ExtendedStatistic, latency.Period, latency.Threshold, latency.ComparisonOperator],
        ['ratelane', 'LiveLatencyMs', liveDims, 'p95', 300, lane.live.defaultDeadlineMs, 'GreaterThanThreshold'],
      );
      assert.deepEqual(
        [
          serverErrors.MetricName,
          serverErrors.Dimensions,
          serverErrors.Statistic,
          serverErrors.Period,
          serverErrors.Threshold,
          serverErrors.ComparisonOperator,
        ],
        ['LiveServerError', liveDims, 'Sum', 300, lane.live.alarms.serverErrors, 'GreaterThanOrEqualToThreshold'],
      );
      assert.deepEqual([serverErrors.EvaluationPeriods, api5xx.EvaluationPeriods], [1, 1], 'within one 5-minute period');
      assert.deepEqual(
        [api5xx.Namespace, api5xx.MetricName, api5xx.Statistic, api5xx.Threshold],
        ['AWS/ApiGateway', '5xx', 'Sum', lane.live.alarms.serverErrors],
      );
      assert.deepEqual(api5xx.Dimensions, [
        { Name: 'ApiId', Value: { Ref: logicalId(s.stack, live.api) } },
        { Name: 'Stage', Value: '$default' },
      ]);
      assert.equal(pending.Threshold, lane.live.alarms.pendingSharePercent);
      assert.deepEqual(pending.Metrics, [
        { Id: 'expr_1', Expression: '100 * FILL(livePending, 0) / liveRequests', ReturnData: true, Label: 'pending share (%)' },
        {
          Id: 'livePending',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'LivePending', Dimensions: liveDims }, Period: 300, Stat: 'Sum' },
        },
        {
          Id: 'liveRequests',
          ReturnData: false,
          MetricStat: { Metric: { Namespace: 'ratelane', MetricName: 'LiveRequests', Dimensions: liveDims }, Period: 300, Stat: 'Sum' },
        },
      ]);
      assert.deepEqual(
        [late.MetricName, late.Dimensions, late.Statistic, late.Threshold, late.ComparisonOperator],
        ['LiveOverDeadline', liveDims, 'Sum', 0, 'GreaterThanThreshold'],
      );
      for (const alarm of [latency, serverErrors, api5xx, pending, late]) {
        assert.deepEqual(alarm.AlarmActions, topic, alarm.AlarmName);
        assert.equal(alarm.TreatMissingData, 'notBreaching', alarm.AlarmName);
      }
      for (const alarm of [latency, serverErrors, api5xx, pending]) assert.deepEqual(alarm.OKActions, topic, `${alarm.AlarmName} is a state`);
      assert.equal(late.OKActions, undefined, 'a late answer is an event: no OK a minute later');
    });

    it('alarms on any throttle of the live function (a caller refused, no work done), on the lane topic, saying what to do', () => {
      // Prepare
      const s = of(lane);
      const live = s.stack.live;
      assert.ok(live);
      const topic = [{ Ref: logicalId(s.stack, s.stack.alarms.topic) }];
      // Act
      const throttles = alarmsByName(s.json).get(`ratelane-${lane.name}-live-throttles`);
      // Assess
      assert.ok(throttles, 'the live function has a throttle alarm');
      const { AlarmActions, OKActions, AlarmDescription, ...rest } = throttles;
      assert.deepEqual(rest, {
        AlarmName: `ratelane-${lane.name}-live-throttles`,
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(s.stack, live.function) } }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      assert.deepEqual([AlarmActions, OKActions], [topic, topic], 'a state: ALARM and OK on the lane topic');
      assert.match(AlarmDescription, new RegExp(`ratelane-${lane.name}-live\\b.*5xx`), 'says who was throttled and what the caller saw');
      assert.match(AlarmDescription, /Concurrent executions.*consumer\.maximumConcurrency.*live\.reservedConcurrency/, 'says what to do');
    });

    it('tells a live function with reserved concurrency that its reservation is what throttles it', () => {
      // Prepare
      const s = synthLane(lane.name, { live: { reservedConcurrency: 7 } });
      // Act
      const throttles = alarmsByName(s.json).get(`ratelane-${lane.name}-live-throttles`);
      // Assess
      assert.match(String(throttles?.AlarmDescription), /live\.reservedConcurrency 7\) is below the stage's traffic \(live\.throttle rate 50\/s, burst 100\)/);
    });

    it('shows live requests by state, p50/p95 against the deadline and the pending share on the lane dashboard', () => {
      // Prepare
      const { template } = of(lane);
      // Act
      const body = dashboardBody(template);
      const metricsOf = (title: string) => JSON.stringify(body.widgets.find((w) => w.properties.title === title)?.properties.metrics);
      const annotationsOf = (title: string) => JSON.stringify(body.widgets.find((w) => w.properties.title === title)?.properties.annotations);
      // Assess
      const [requests, latency, pending] = LIVE_DASHBOARD_WIDGET_TITLES;
      assert.match(metricsOf(requests), /"LiveRequests".*"LiveCommitted".*"LivePending".*"LiveNeedsReview".*"LiveRejected".*"LiveServerError"/);
      assert.match(metricsOf(requests), /"AWS\/ApiGateway","4xx".*"AWS\/ApiGateway","5xx"/);
      assert.match(metricsOf(requests), /"AWS\/Lambda","Throttles","FunctionName","<token>"/, 'the live function’s throttles beside the API’s 4xx/5xx');
      assert.match(metricsOf(latency), /"LiveLatencyMs".*"stat":"p50".*"stat":"p95"/);
      assert.match(annotationsOf(latency), new RegExp(`"value":${lane.live.defaultDeadlineMs}`));
      assert.match(metricsOf(pending), /100 \* FILL\(livePending, 0\) \/ liveRequests/);
      assert.match(annotationsOf(pending), new RegExp(`"value":${lane.live.alarms.pendingSharePercent}`));
      assert.match(metricsOf(requests), new RegExp(`"service","ratelane-live-${lane.name}"`));
    });
  });
}
