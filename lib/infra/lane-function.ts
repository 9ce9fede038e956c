/**
 * What a lane's Lambda functions share (the queue consumer, the live API function and the batch
 * reconciler): the runtime, the offline esbuild bundling (no Docker; ESM, the AWS SDK bundled in), the
 * grants on the provider side (`bedrock:InvokeModel` on exactly the lane's model for a Bedrock lane
 * with IAM auth) and the cdk-nag acknowledgement of an object-prefix grant on the lane bucket. Every
 * ARN is built with the stack's partition.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, type FunctionProps, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { type BedrockModelTarget, bedrockModelTarget, type LaneConfig } from '../config/lanes.js';
import { DOCUMENT_PREFIX } from '../platform/resources.js';
import type { LaneStorage } from './storage.js';

/**
 * Two levels up from lib/infra: the repository's root (where `lambdas/` and the lock file live) when
 * run from source, the package's `dist/` (where the prebuilt bundles live: {@link PREBUILT_BUNDLES}) when installed.
 */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Where the installed package keeps its lane functions, bundled when it was packed (`npm run build`):
 * `<name>/index.mjs` each, made with {@link laneFunctionBundling}'s options. From source there are none,
 * and the functions are bundled at synth with the local esbuild.
 */
const PREBUILT_BUNDLES = join(PROJECT_ROOT, 'assets');

/** A lane function's entry: its file under `lambdas/`, and its bundle's folder under {@link PREBUILT_BUNDLES}. */
export type LaneFunctionName = 'consumer' | 'live' | 'batch-reconciler';

/** The newest Node.js runtime this aws-cdk-lib offers (kept explicit; NODEJS_LATEST lags behind). */
const CONSUMER_RUNTIME = Runtime.NODEJS_24_X;

/** esbuild target matching {@link CONSUMER_RUNTIME}. */
const CONSUMER_ESBUILD_TARGET = 'node24';

/**
 * ESM bundles lose CommonJS's `require`; bundled CommonJS dependencies still call it for Node
 * built-ins, so the bundle gets one back from `createRequire`.
 */
const ESM_REQUIRE_BANNER = "import { createRequire as __ratelaneCreateRequire } from 'node:module'; const require = __ratelaneCreateRequire(import.meta.url);";

/** Bedrock with IAM auth: Converse (what the adapter calls) is authorized as `bedrock:InvokeModel`. */
const BEDROCK_INVOKE_ACTIONS = ['bedrock:InvokeModel'] as const;

/** The entry file of a lane function under `lambdas/`. */
export function laneFunctionEntry(name: LaneFunctionName): string {
  return join(PROJECT_ROOT, 'lambdas', `${name}.ts`);
}

/** What a lane function is given besides its code: everything a Lambda function takes but the code, handler, runtime and architecture. */
export type LaneFunctionProps = Omit<FunctionProps, 'code' | 'handler' | 'runtime' | 'architecture'>;

/**
 * A lane function (Node.js {@link CONSUMER_RUNTIME}, arm64, handler `index.handler`): the package's
 * prebuilt bundle when there is one (an installed ratelane: no esbuild or TypeScript needed at synth),
 * else `lambdas/<name>.ts` bundled now with the local esbuild (from source). Either way the same esbuild
 * options ({@link laneFunctionBundling}) made the code.
 */
export function laneFunction(scope: Construct, id: string, name: LaneFunctionName, props: LaneFunctionProps): LambdaFunction {
  // Active X-Ray tracing: the function's Tracer (`lib/platform/tracing.ts`) records its invocations, and X-Ray
  // links a consumer's trace to the producer's through the message's AWSTraceHeader.
  const common = { ...props, runtime: CONSUMER_RUNTIME, architecture: Architecture.ARM_64, tracing: Tracing.ACTIVE };
  if (props.role) acknowledgeTracingGrant(props.role);
  const prebuilt = join(PREBUILT_BUNDLES, name);
  if (existsSync(join(prebuilt, 'index.mjs'))) return new LambdaFunction(scope, id, { ...common, handler: 'index.handler', code: Code.fromAsset(prebuilt) });
  return new NodejsFunction(scope, id, {
    ...common,
    entry: laneFunctionEntry(name),
    handler: 'handler',
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
    bundling: laneFunctionBundling(),
  });
}

/** How every lane function is bundled: the local esbuild, ESM for {@link CONSUMER_RUNTIME}, everything bundled, minified, with source maps. */
export function laneFunctionBundling(): BundlingOptions {
  return {
    forceDockerBundling: false,
    format: OutputFormat.ESM,
    target: CONSUMER_ESBUILD_TARGET,
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_BANNER,
    // Bundle everything, the AWS SDK included: the function runs the SDK versions the tests ran.
    externalModules: [],
    minify: true,
    sourceMap: true,
    sourcesContent: false,
  };
}

/** What a lane's functions may invoke on Bedrock: the lane's model for a Bedrock lane with IAM auth, else undefined (the key authenticates). */
export function laneBedrockTarget(lane: LaneConfig): BedrockModelTarget | undefined {
  return lane.provider.kind === 'bedrock' && (lane.provider.auth ?? 'iam') === 'iam' ? bedrockModelTarget(lane, lane.provider.model) : undefined;
}

/**
 * `bedrock:InvokeModel` on exactly the lane's model, for `role`. A foundation model: its ARN in the
 * lane's region. A cross-region inference profile (`us.`, `eu.`, ... of the lane's own geography,
 * checked by the lane config): the profile in the lane's region and account, and the foundation model
 * in whichever region of the geography the profile routes to (AWS's list, per model; hence the region
 * wildcard), but only when invoked through that one profile (`bedrock:InferenceProfileArn`).
 */
export function grantBedrockInvoke(role: Role, target: BedrockModelTarget): void {
  const stack = Stack.of(role);
  const foundationModelArn = (region: string) => foundationModelArnOf(stack, region, target.modelId);
  if (target.kind === 'foundation-model') {
    role.addToPrincipalPolicy(new PolicyStatement({ sid: 'InvokeModel', actions: [...BEDROCK_INVOKE_ACTIONS], resources: [foundationModelArn(stack.region)] }));
    return;
  }
  const profileArn = stack.formatArn({
    service: 'bedrock',
    resource: 'inference-profile',
    resourceName: target.profileId,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  role.addToPrincipalPolicy(new PolicyStatement({ sid: 'InvokeInferenceProfile', actions: [...BEDROCK_INVOKE_ACTIONS], resources: [profileArn] }));
  role.addToPrincipalPolicy(
    new PolicyStatement({
      sid: 'InvokeModelThroughProfile',
      actions: [...BEDROCK_INVOKE_ACTIONS],
      resources: [foundationModelArn('*')],
      conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
    }),
  );
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${target.modelId}]`,
    reason: `The ${target.geography}. inference profile runs ${target.modelId} in a region of its geography that AWS picks per request from its own per-model list, which changes without notice; the grant is bedrock:InvokeModel on this one model, only through this lane's own profile (condition bedrock:InferenceProfileArn), and the lane config refuses a profile of another geography.`,
  });
}

/** Acknowledges cdk-nag's AwsSolutions-IAM5 finding on the X-Ray grant active tracing gives a function's role. */
function acknowledgeTracingGrant(role: IRole): void {
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'Active tracing (Tracing.ACTIVE) grants xray:PutTraceSegments and xray:PutTelemetryRecords, which X-Ray does not scope to resources (its service authorization reference lists no resource type for them); nothing else on this role is granted on *.',
  });
}

/** Acknowledges cdk-nag's AwsSolutions-IAM5 finding on `role`'s grant over the documents prefix of the lane bucket, with `reason`. */
export function acknowledgeDocumentPrefixGrant(role: Role, storage: LaneStorage, reason: string): void {
  acknowledgeBucketPrefixGrant(role, storage, `${DOCUMENT_PREFIX}*`, reason);
}

/** Acknowledges cdk-nag's AwsSolutions-IAM5 finding on `role`'s grant over the objects `pattern` (a key pattern such as `documents/*`) of the lane bucket, with `reason`. */
export function acknowledgeBucketPrefixGrant(role: Role, storage: LaneStorage, pattern: string, reason: string): void {
  const stack = Stack.of(role);
  const bucketLogicalId = stack.resolve(stack.getLogicalId(storage.bucket.node.defaultChild as CfnBucket)) as string;
  Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Resource::<${bucketLogicalId}.Arn>/${pattern}]`, reason });
}

/** The ARN of foundation model `modelId` in `region` (no account), in the stack's partition. */
export function foundationModelArnOf(stack: Stack, region: string, modelId: string): string {
  return stack.formatArn({
    service: 'bedrock',
    region,
    account: '',
    resource: 'foundation-model',
    resourceName: modelId,
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
}
