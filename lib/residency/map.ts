/**
 * The residency map, pure: from each lane's synthesized template (or, when the synth refused the lane,
 * its config alone) every place a job's bytes or what is derived from them go — the template's
 * buckets, queues, tables and backups, log groups and metrics, then the model endpoint and the geography
 * it processes in (`lib/config/endpoints.ts`), the batch lane's files, and the review path — and the
 * places outside the lane's geography, flagged with why.
 *
 * The lane config is the one the stack hands its functions (`RATELANE_LANE_CONFIG` in the template),
 * else the configured one. Retention and encryption are read from the template only: what the template
 * does not set is named as the service's default.
 */
import { approvedEndpoints, endpointProblem, geographyOfRegion, modelBaseUrl, modelEndpointHost } from '../config/endpoints.js';
import { batchApiOf, batchReconcilerFunctionName, laneInAccount } from '../config/names.js';
import type { LaneConfig } from '../config/schema.js';
import { openAiFileExpirySeconds } from '../lanes/batch/providers/openai.js';
import { batchFileExpirySeconds } from '../lanes/batch/reconciler-deps.js';
import { manifestTableName } from '../store/manifest-model.js';
import { bucketRetention } from './describe.js';
import type { LaneResidency, PlaceKind, ResidencyFlag, ResidencyMap, ResidencyPlace, ResidencySource } from './model.js';
import { located, type TemplatePlaces, templatePlaces } from './places.js';
import { deployedLaneConfig, renderValue, type StackTemplate } from './template.js';

/** What the map is drawn from for one lane. */
export interface LaneSource {
  /** The lane's name. */
  name: string;
  /** The lane as configured (config file and context), when known. */
  configured: LaneConfig | undefined;
  /** Its stack's template; undefined when the synth refused the lane. */
  stack: StackTemplate | undefined;
  /** Where the template came from. */
  origin: Exclude<ResidencySource, 'config'>;
  /** Why the synth refused the lane (then `stack` is undefined). */
  synthRefusal?: string | undefined;
}

/** The account as a template leaves it to the deploy (`${AWS::AccountId}`), in the names drawn from a lane config. */
const ACCOUNT_TOKEN = renderValue({ Ref: 'AWS::AccountId' });

/** The order places are listed in. */
const KIND_ORDER: readonly PlaceKind[] = [
  'bucket',
  'queue',
  'dead-letter-queue',
  'table',
  'table-backups',
  'log-group',
  'metrics',
  'model-endpoint',
  'batch-files',
  'review',
  'stack',
];

/** What a place of a lane that was not synthesized says of its encryption and retention. */
const NOT_SYNTHESIZED = 'unknown: the lane was not synthesized';

/** Bedrock runtime hosts name their region. */
const BEDROCK_HOST = /^bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com$/;

/** The model endpoint: its host, the geography it processes in, and whether the lane may send text there. */
function endpointPlace(lane: LaneConfig, laneGeography: string): { place: ResidencyPlace; problem: string | undefined } {
  const host = modelEndpointHost(lane);
  const problem = endpointProblem(lane);
  const approved = approvedEndpoints(lane).find((e) => e.host === host);
  // A host the lane may use that no list names is the function's own machine (loopback): in the lane wherever it runs.
  const geography = approved?.geography ?? (problem === undefined ? laneGeography : null);
  const baseUrl = modelBaseUrl(lane);
  return {
    problem,
    place: {
      kind: 'model-endpoint',
      name: host,
      logicalId: null,
      holds: `each call's prompt with the document's text (provider ${lane.provider.kind}, model ${lane.provider.model}); the extracted JSON comes back`,
      region: BEDROCK_HOST.exec(host)?.[1] ?? null,
      geography,
      encryption: baseUrl?.startsWith('http:') ? 'none in transit: plain HTTP' : 'TLS in transit (HTTPS)',
      retention: "the provider's data-retention terms (not in the template)",
      inLaneGeography: problem === undefined,
    },
  };
}

/** The batch lane's input and output files: under the bucket's `batch/` (Bedrock), or the provider's files (OpenAI). */
function batchPlace(
  lane: LaneConfig,
  endpoint: { place: ResidencyPlace; problem: string | undefined },
  drawn: TemplatePlaces | undefined,
  laneGeography: string,
): { place: ResidencyPlace; why?: string } | undefined {
  if (!lane.batch.enabled) return undefined;
  const api = batchApiOf(lane.provider);
  const holds = "each batch's input (the documents' text as JSONL requests) and its output and error files";
  if (api === 'bedrock') {
    const bucket = drawn?.sourceBucket;
    return {
      place: {
        kind: 'batch-files',
        name: `s3://${bucket?.name ?? laneInAccount(lane, ACCOUNT_TOKEN).resources.bucketName}/batch/ (input/, output/)`,
        logicalId: bucket?.logicalId ?? null,
        holds,
        ...located(drawn ? bucket?.region : lane.region, laneGeography),
        encryption: bucket?.encryption ?? NOT_SYNTHESIZED,
        retention: bucket ? bucketRetention(bucket.properties, 'batch/') : NOT_SYNTHESIZED,
      },
    };
  }
  if (api === 'openai') {
    return {
      place: {
        ...endpoint.place,
        kind: 'batch-files',
        name: `${endpoint.place.name}: Files and Batch API`,
        holds,
        encryption: `${endpoint.place.encryption}; at rest: the provider's`,
        retention: `${openAiFileExpirySeconds(batchFileExpirySeconds(lane)) / 86_400} d after each file's creation (retention.batchArtifactsDays, sent as the files' expiry; OpenAI keeps one 30 d at most); an erased source's batch files deleted by the reconciler once the batch has ended`,
      },
      why: `the batch files go to the model endpoint: ${endpoint.problem ?? 'outside the lane'}`,
    };
  }
  return {
    place: {
      kind: 'batch-files',
      name: `no batch API for provider kind ${lane.provider.kind}`,
      logicalId: null,
      holds,
      region: null,
      geography: null,
      encryption: NOT_SYNTHESIZED,
      retention: NOT_SYNTHESIZED,
      inLaneGeography: false,
    },
    why: `ratelane has no batch client for provider kind ${lane.provider.kind}: the synth refuses batch.enabled`,
  };
}

/**
 * The review path: `ratelane review` lists the jobs in needs_review and commits a reviewer's corrected
 * object through a DynamoDB client in the lane's region, in the lane's own ledger and results tables
 * (`lib/review/lane.ts`); encryption and retention are the ledger's.
 */
function reviewPlace(lane: LaneConfig, ledger: ResidencyPlace | undefined, laneGeography: string): ResidencyPlace {
  const r = lane.resources;
  return {
    kind: 'review',
    name: `ratelane review: ${r.ledgerTable} and ${r.resultsTable}, via DynamoDB in ${lane.region}`,
    logicalId: ledger?.logicalId ?? null,
    holds: "the needs_review entries with their reasons (read), and a reviewer's corrected object (written as the job's result)",
    ...located(lane.region, laneGeography),
    encryption: ledger?.encryption ?? NOT_SYNTHESIZED,
    retention: ledger?.retention ?? NOT_SYNTHESIZED,
  };
}

/** The places of a lane the synth refused, from its config: its resources' names in its region, encryption and retention unknown. */
function configPlaces(lane: LaneConfig, laneGeography: string): ResidencyPlace[] {
  const at = { logicalId: null, ...located(lane.region, laneGeography), encryption: NOT_SYNTHESIZED, retention: NOT_SYNTHESIZED };
  // The names as deployed: a bucket left at its default name carries the account.
  const r = laneInAccount(lane, ACCOUNT_TOKEN).resources;
  const functions = [
    `ratelane-${lane.name}-consumer`,
    ...(lane.live.enabled ? [`ratelane-${lane.name}-live`] : []),
    ...(lane.batch.enabled ? [batchReconcilerFunctionName(lane.name)] : []),
  ];
  return [
    { ...at, kind: 'bucket', name: r.bucketName, holds: "the documents' text (documents/<sha256>.txt)" },
    { ...at, kind: 'queue', name: r.queueName, holds: 'job messages: a reference to the document; no text' },
    { ...at, kind: 'dead-letter-queue', name: r.dlqName, holds: 'job messages that failed every delivery; no text' },
    { ...at, kind: 'table', name: r.resultsTable, holds: "each job's extracted JSON" },
    { ...at, kind: 'table', name: r.ledgerTable, holds: "every attempt's entry, needs_review included" },
    { ...at, kind: 'table', name: r.rateStateTable, holds: 'rate-limit counters: no document text' },
    ...(lane.batch.enabled ? [{ ...at, kind: 'table' as const, name: manifestTableName(lane), holds: 'batch items: document references and states' }] : []),
    ...functions.map((name) => ({ ...at, kind: 'log-group' as const, name: `logs of ${name}`, holds: `log lines of function ${name}` })),
    {
      ...at,
      kind: 'metrics',
      name: 'CloudWatch metrics',
      holds: 'counts, durations and token numbers: no document text',
      encryption: 'not applicable: numbers, no text',
    },
  ];
}

/** Why a place of the template or the config is flagged. */
function whyFlagged(place: ResidencyPlace, laneGeography: string): string {
  if (place.geography === null) return 'its region cannot be determined (an environment-agnostic stack, or a region the template leaves to the deploy)';
  return `its region ${place.region} is in geography ${place.geography}, outside the lane's geography ${laneGeography}`;
}

/** One lane's map. */
function laneResidency(source: LaneSource): LaneResidency {
  const { stack } = source;
  const lane = (stack ? deployedLaneConfig(stack.template) : undefined) ?? source.configured;
  const region = lane?.region ?? stack?.region ?? 'unknown';
  const geography = geographyOfRegion(region);
  const drawn = stack ? templatePlaces(stack, geography, lane) : undefined;
  const places: ResidencyPlace[] = [...(drawn?.places ?? (lane ? configPlaces(lane, geography) : []))];
  /** Why the places drawn from the lane config (not the template) are flagged, when they are. */
  const reasons = new Map<ResidencyPlace, string>();
  if (lane) {
    const endpoint = endpointPlace(lane, geography);
    places.push(endpoint.place);
    if (endpoint.problem !== undefined) reasons.set(endpoint.place, endpoint.problem);
    const batch = batchPlace(lane, endpoint, drawn, geography);
    if (batch) places.push(batch.place);
    if (batch?.why !== undefined) reasons.set(batch.place, batch.why);
    places.push(reviewPlace(lane, drawn?.ledger, geography));
  } else {
    const unknown: ResidencyPlace = {
      kind: 'model-endpoint',
      name: 'unknown',
      logicalId: null,
      holds: "each call's prompt with the document's text",
      region: null,
      geography: null,
      encryption: 'unknown',
      retention: 'unknown',
      inLaneGeography: false,
    };
    places.push(unknown);
    reasons.set(unknown, `lane ${source.name}: no lane config in the template nor in the config file, so its model endpoint is unknown`);
  }
  places.sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind));
  const flagged: ResidencyFlag[] = places
    .filter((p) => !p.inLaneGeography)
    .map((p) => ({ kind: p.kind, name: p.name, why: reasons.get(p) ?? whyFlagged(p, geography) }));
  const refusal = source.synthRefusal;
  if (refusal !== undefined) {
    const endpointFlag = flagged.find((f) => f.kind === 'model-endpoint');
    if (endpointFlag) endpointFlag.why += `; cdk synth refuses the lane: ${refusal}`;
    else flagged.push({ kind: 'stack', name: `ratelane-${source.name}`, why: `cdk synth refuses the lane: ${refusal}` });
  }
  return {
    lane: source.name,
    region,
    geography,
    stack: stack?.stackName ?? null,
    source: stack ? source.origin : 'config',
    synthRefusal: refusal ?? null,
    places,
    flagged,
  };
}

/**
 * The residency map of the lanes, in the order given: each lane's places (from its template, or from
 * its config when the synth refused it) and what is flagged. Pure.
 */
export function residencyMap(lanes: readonly LaneSource[]): ResidencyMap {
  return { lanes: lanes.map(laneResidency) };
}
