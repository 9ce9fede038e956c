/**
 * What a deployed lane must satisfy beyond the schema (checked by the stack at synth): the consumer's
 * function timeout against one record's worst case, the Bedrock model targets the stack can grant
 * within the lane's geography, and no Vertex AI provider. Re-exported by `lanes.ts`.
 */
import { endpointProblem } from './endpoints.js';
import { LaneConfigError } from './errors.js';
import type { LaneConfig } from './schema.js';

/**
 * Repair calls the consumer allows after a model call whose output failed validation (the default of
 * `lib/extraction/extract.ts`): one record may make 1 + this many model calls in one invocation.
 */
export const CONSUMER_REPAIR_ATTEMPTS = 1;

/**
 * Seconds one record needs in an invocation besides its model calls: reading the document and taking
 * an admission slot before the first call, and after the last one the conditional commit, the ledger
 * entry and the token settlement, or the re-send of a deferral. Each is one AWS call, normally tens of
 * milliseconds, retried on a blip within the time left (`lib/platform/retry.ts`); 5 s leaves room for a
 * slow answer or a retry of each without inflating the function timeout (the consumer also defers a
 * record it has no time left for).
 */
export const INVOCATION_MARGIN_SECONDS = 5;

/** The shortest function timeout that fits one record: provider timeout x (1 + repairs) + margin, in whole seconds. */
export function requiredFunctionTimeoutSeconds(lane: Pick<LaneConfig, 'provider'>): number {
  return Math.ceil((lane.provider.timeoutMs * (1 + CONSUMER_REPAIR_ATTEMPTS)) / 1000) + INVOCATION_MARGIN_SECONDS;
}

/**
 * Checks that the consumer's function timeout fits one record's worst case (the call, its repairs and
 * the margin); returns the problem, or `undefined`. Not part of the schema: tests and local runs use
 * short function timeouts on purpose; the stack refuses at synth.
 */
export function checkFunctionTimeout(lane: Pick<LaneConfig, 'name' | 'consumer' | 'provider' | 'queue'>): string | undefined {
  const required = requiredFunctionTimeoutSeconds(lane);
  const timeout = lane.consumer.timeoutSeconds;
  if (timeout >= required) return undefined;
  const calls = 1 + CONSUMER_REPAIR_ATTEMPTS;
  const maxProviderTimeoutMs = Math.floor(((timeout - INVOCATION_MARGIN_SECONDS) * 1000) / calls);
  const raise =
    required <= 900
      ? `raise consumer.timeoutSeconds to at least ${required}${
          lane.queue.visibilityTimeoutSeconds < 6 * required ? ` (and queue.visibilityTimeoutSeconds to at least ${6 * required})` : ''
        }`
      : 'the Lambda maximum of 900 s cannot hold it';
  const lower = maxProviderTimeoutMs > 0 ? `, or lower provider.timeoutMs to at most ${maxProviderTimeoutMs}` : '';
  return (
    `lane ${lane.name}: consumer.timeoutSeconds ${timeout} s cannot hold one record: provider.timeoutMs ${lane.provider.timeoutMs} ms x ` +
    `${calls} calls (1 + ${CONSUMER_REPAIR_ATTEMPTS} repair) + ${INVOCATION_MARGIN_SECONDS} s margin = ${required} s; ${raise}${lower}`
  );
}

/**
 * Geographies of Bedrock's system-defined cross-region inference profiles (`<geography>.<model id>`)
 * and the lane regions that belong to each. A profile routes a request to another region of its
 * geography (AWS's list of destination regions, per model); a lane only uses a profile of its own
 * region's geography. `global.` profiles route to any commercial region and are refused.
 */
const BEDROCK_PROFILE_GEOGRAPHIES: Readonly<Record<string, (region: string) => boolean>> = Object.freeze({
  us: (region: string) => /^us-(?:east|west)-\d$/.test(region),
  'us-gov': (region: string) => region.startsWith('us-gov-'),
  eu: (region: string) => region.startsWith('eu-'),
  apac: (region: string) => region.startsWith('ap-'),
  jp: (region: string) => region === 'ap-northeast-1' || region === 'ap-northeast-3',
  au: (region: string) => region === 'ap-southeast-2' || region === 'ap-southeast-4',
});

/** What a Bedrock lane's model id names: a foundation model in the lane's region, or a cross-region inference profile. */
export type BedrockModelTarget =
  | { readonly kind: 'foundation-model'; readonly modelId: string }
  | { readonly kind: 'inference-profile'; readonly profileId: string; readonly geography: string; readonly modelId: string };

/**
 * Reads a Bedrock model id as the stack grants it. Throws {@link LaneConfigError} for what the stack
 * cannot grant without leaving the lane's geography: an ARN (application inference profiles,
 * provisioned throughput), a `global.` profile, or a profile of another geography than the lane's region.
 */
export function bedrockModelTarget(lane: Pick<LaneConfig, 'name' | 'region'>, model: string): BedrockModelTarget {
  if (model.startsWith('arn:')) {
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is an ARN; give a foundation model id (anthropic.claude-...) or a cross-region inference profile id of the lane's geography (us.anthropic.claude-...)`,
    );
  }
  const dot = model.indexOf('.');
  const prefix = dot > 0 ? model.slice(0, dot) : '';
  if (prefix === 'global') {
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is a global inference profile, which may run the model in any commercial region of the world; the ${lane.name} lane (${lane.region}) must stay in its geography: use the foundation model id or a profile of the lane's geography`,
    );
  }
  const inGeography = BEDROCK_PROFILE_GEOGRAPHIES[prefix];
  if (!inGeography) return { kind: 'foundation-model', modelId: model };
  if (!inGeography(lane.region)) {
    const own = Object.keys(BEDROCK_PROFILE_GEOGRAPHIES).filter((g) => BEDROCK_PROFILE_GEOGRAPHIES[g]?.(lane.region));
    throw new LaneConfigError(
      `lane ${lane.name}: Bedrock model "${model}" is a cross-region inference profile of geography "${prefix}", but the lane's region ${lane.region} is ${
        own.length > 0 ? `in ${own.map((g) => `"${g}"`).join(' / ')}` : 'in none of the profile geographies'
      }: a job must not be processed outside its lane's geography; use ${own.length > 0 ? `"${own[0]}.${model.slice(dot + 1)}" or ` : ''}the foundation model id "${model.slice(dot + 1)}"`,
    );
  }
  return { kind: 'inference-profile', profileId: model, geography: prefix, modelId: model.slice(dot + 1) };
}

/**
 * The most bytes a lane's config may take as JSON: each lane function gets it whole in one environment
 * variable, and Lambda holds at most 4 KB of variables per function; the rest (table and queue names, the
 * lane's senders) needs about 1 KB.
 */
const LANE_CONFIG_ENV_BYTES = 3_072;

/**
 * Everything that keeps a valid lane config from running in AWS, as messages naming the lane, the
 * numbers and what to change: the config too large for the functions' environment ({@link LANE_CONFIG_ENV_BYTES}),
 * the function timeout (see {@link checkFunctionTimeout}), a model endpoint
 * not approved for the lane's geography (`endpoints.ts`), a Vertex AI
 * provider (the stack gives the function no Google credentials), a Bedrock model it cannot grant
 * (see {@link bedrockModelTarget}).
 */
export function deploymentProblems(lane: LaneConfig): string[] {
  const problems: string[] = [];
  const bytes = Buffer.byteLength(JSON.stringify(lane), 'utf8');
  if (bytes > LANE_CONFIG_ENV_BYTES) {
    problems.push(
      `lane ${lane.name}: its config is ${bytes} bytes as JSON, over the ${LANE_CONFIG_ENV_BYTES} its functions' environment can hold (Lambda: 4 KB of variables per function); name fewer producers, tenant weights, readers or endpoints`,
    );
  }
  const timeout = checkFunctionTimeout(lane);
  if (timeout) problems.push(timeout);
  const endpoint = endpointProblem(lane);
  if (endpoint) problems.push(endpoint);
  const provider = lane.provider;
  if (provider.kind === 'gemini' && provider.vertex) {
    problems.push(
      `lane ${lane.name}: provider kind gemini with vertex cannot be deployed: Vertex AI authenticates with Google credentials, and the stack gives the function none (no service-account key in the lane's secret, no workload identity federation); use the Gemini API with API keys (drop provider.vertex) or another provider kind`,
    );
  }
  if (provider.kind === 'bedrock') {
    try {
      bedrockModelTarget(lane, provider.model);
    } catch (error) {
      if (!(error instanceof LaneConfigError)) throw error;
      problems.push(error.message);
    }
  }
  return problems;
}

/** Throws {@link LaneConfigError} listing every {@link deploymentProblems} of the lane. */
export function assertDeployable(lane: LaneConfig): void {
  const problems = deploymentProblems(lane);
  if (problems.length > 0) throw new LaneConfigError(`lane ${lane.name} cannot be deployed:\n- ${problems.join('\n- ')}`);
}
