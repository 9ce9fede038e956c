/**
 * Where a lane's text goes to be processed: the host of its model endpoint, and whether that host is
 * approved for the lane's geography. A lane's geography is its region's (`eu-central-1` → `eu`); a lane
 * lists the endpoints approved for it with the geography each processes in, as the operator attests it
 * (`modelEndpoints`: OpenAI's European data-residency host, an Azure OpenAI resource in an EU region, …).
 * Without a list, the hosts whose processing place is documented by their operator are approved for
 * their own geography: Bedrock (its runtime, and its control plane for batch jobs) in a region, Vertex AI in a location, and OpenAI's
 * `eu.api.openai.com` (EU) and `api.openai.com` (US). A loopback host (a model on the same machine, the
 * local stack's fake provider) is in the lane wherever it runs. Pure: no SDK, no network.
 */
import type { LaneConfig } from './schema.js';

/** A lane's geography: its region's prefix (`us`, `eu`, `ap`, `ca`, `sa`, `me`, `af`, `il`, `mx`, `cn`). */
export function geographyOfRegion(region: string): string {
  return region.split('-')[0] ?? region;
}

/**
 * The base URL a lane's model adapter is given: the provider's `baseUrl`, else the SDK's documented default,
 * always explicit — an SDK given none reads one from its environment (`OPENAI_BASE_URL`,
 * `ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`, `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`), which would let a changed
 * variable move the text. `undefined` where the settings name the endpoint themselves (Azure OpenAI's
 * resource, Vertex AI's location).
 */
export function modelBaseUrl(lane: Pick<LaneConfig, 'provider' | 'region'>): string | undefined {
  const p = lane.provider;
  switch (p.kind) {
    case 'openai-compatible':
      return p.azure ? undefined : (p.baseUrl ?? 'https://api.openai.com/v1');
    case 'anthropic':
      return p.baseUrl ?? 'https://api.anthropic.com';
    case 'gemini':
      return p.vertex ? undefined : (p.baseUrl ?? 'https://generativelanguage.googleapis.com/');
    case 'bedrock':
      return p.baseUrl ?? `https://bedrock-runtime.${lane.region}.amazonaws.com`;
  }
}

/** The host a lane's model calls go to: {@link modelBaseUrl}'s, or the Azure resource's, or Vertex AI's location's. */
export function modelEndpointHost(lane: Pick<LaneConfig, 'provider' | 'region'>): string {
  const p = lane.provider;
  if (p.kind === 'openai-compatible' && p.azure) return new URL(p.azure.endpoint).hostname;
  if (p.kind === 'gemini' && p.vertex) return p.vertex.location === 'global' ? 'aiplatform.googleapis.com' : `${p.vertex.location}-aiplatform.googleapis.com`;
  return new URL(modelBaseUrl(lane) as string).hostname;
}

/** Google Cloud location prefixes → geography. */
const GOOGLE_LOCATIONS: Readonly<Record<string, string>> = {
  europe: 'eu',
  us: 'us',
  northamerica: 'ca',
  southamerica: 'sa',
  asia: 'ap',
  australia: 'ap',
  me: 'me',
  africa: 'af',
};

/** The geography a host is documented to process in by its operator, when it is one ratelane knows; else undefined. */
function documentedGeography(host: string): string | undefined {
  if (host === 'eu.api.openai.com') return 'eu';
  if (host === 'api.openai.com') return 'us';
  const bedrock = /^bedrock(?:-runtime)?(?:-fips)?\.([a-z]{2}(?:-gov)?-[a-z]+-\d)\.amazonaws\.com$/.exec(host);
  if (bedrock) return geographyOfRegion(bedrock[1]!);
  const vertex = /^([a-z]+)-[a-z]+\d+-aiplatform\.googleapis\.com$/.exec(host);
  if (vertex) return GOOGLE_LOCATIONS[vertex[1]!];
  return undefined;
}

/** Whether a host is this machine's (a model on the same host, the local stack's fake provider). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The endpoints approved for a lane: its `modelEndpoints`, else its model host when its operator documents where it processes. */
export function approvedEndpoints(lane: Pick<LaneConfig, 'provider' | 'region' | 'modelEndpoints'>): { host: string; geography: string }[] {
  if (lane.modelEndpoints) return lane.modelEndpoints.map(({ host, geography }) => ({ host, geography }));
  const host = modelEndpointHost(lane);
  const geography = documentedGeography(host);
  return geography === undefined ? [] : [{ host, geography }];
}

/**
 * Why `host` (default: the lane's model host) may not receive the lane's text — approved for no one, or
 * processing outside the lane's geography — naming the lane, the host and what to change; `undefined`
 * when it may.
 */
export function endpointProblem(lane: Pick<LaneConfig, 'name' | 'provider' | 'region' | 'modelEndpoints'>, host = modelEndpointHost(lane)): string | undefined {
  if (isLoopback(host)) return undefined;
  const geography = geographyOfRegion(lane.region);
  const documented = documentedGeography(host);
  const approved = lane.modelEndpoints
    ? lane.modelEndpoints.find((e) => e.host === host)
    : documented === undefined
      ? undefined
      : { host, geography: documented };
  if (approved?.geography === geography) return undefined;
  const fix =
    geography === 'eu'
      ? `point provider.baseUrl at an endpoint that processes in eu (e.g. https://eu.api.openai.com/v1, OpenAI's European data residency; an Azure OpenAI resource or Bedrock in an EU region) and, unless ratelane knows where it processes, list it in modelEndpoints: [{ "host": "<host>", "geography": "eu" }]`
      : `point the provider at an endpoint that processes in ${geography} and, unless ratelane knows where it processes, list it in modelEndpoints: [{ "host": "<host>", "geography": "${geography}" }]`;
  const where = approved
    ? `processes in ${approved.geography} (${lane.modelEndpoints ? 'as modelEndpoints says' : 'as its operator documents'}), not in the lane's geography`
    : `is not an approved endpoint of the lane (modelEndpoints names ${lane.modelEndpoints ? lane.modelEndpoints.map((e) => e.host).join(', ') : 'none, and ratelane does not know where it processes'})`;
  return `lane ${lane.name} (${lane.region}, geography ${geography}): its model endpoint ${host} ${where}: ${fix}`;
}
