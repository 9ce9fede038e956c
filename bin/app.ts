#!/usr/bin/env -S npx tsx
/**
 * The CDK app: one stack per region lane (`ratelane-us`, `ratelane-eu`, ...), checked by cdk-nag.
 * `npx cdk synth` / `npx cdk deploy ratelane-us`; context: usRegion, euRegion, account and one alarm
 * destination (alarmEmail, usAlarmTopicArn/euAlarmTopicArn, or alarmDestination=none): docs/deploying.md.
 */
import { App } from 'aws-cdk-lib';
import { buildLaneApp } from '../lib/infra/app.js';

const app = new App();
buildLaneApp(app);
app.synth();
