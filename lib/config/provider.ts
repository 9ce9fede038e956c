/**
 * The lane's provider in the lane config: the provider schema (kind, model, keys, limits and the
 * kind-specific settings for Azure OpenAI, Vertex AI and Bedrock) and what follows from it (the
 * classifier dialect, whether the keys need secrets). Re-exported by `lanes.ts`.
 */
import { z } from 'zod';
import { PROVIDER_NAMES } from '../providers/classify/classify.js';

/** Provider limits of one key (per window). `windowScale` shrinks windows for tests and local runs. */
const ProviderLimitsSchema = z.object({
  requestsPerMinute: z.number().int().positive(),
  tokensPerMinute: z.number().int().positive(),
  requestsPerDay: z.number().int().positive(),
});
export type ProviderLimits = z.infer<typeof ProviderLimitsSchema>;

/** One API key of a lane's provider; keys sharing a `quotaOwner` share (and cool down on) one quota. */
const ProviderKeySchema = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  quotaOwner: z.string().min(1),
});

/**
 * Which provider's error wording an OpenAI-compatible endpoint speaks: the OpenAI-compatible
 * adapter passes it to the classifier (`classifyProviderError({ provider: dialect, ... })`). Any of
 * the classifier's providers: `openai` (default, also for a self-hosted server), `azure-openai`,
 * `groq`, `mistral`, `openrouter`, `cohere` (its compatibility API), `gemini` (its OpenAI endpoint),
 * `anthropic`, `vertex`, `bedrock`.
 */
const ProviderDialectSchema = z.enum(PROVIDER_NAMES);
export type ProviderDialect = z.infer<typeof ProviderDialectSchema>;

/**
 * Azure OpenAI through the SDK's `AzureOpenAI` client (retries off). Requires `kind:
 * 'openai-compatible'` and `dialect: 'azure-openai'`. The lane's key secrets are Azure API keys
 * (`api-key` header); Entra ID tokens are not supported yet.
 */
const AzureOpenAiSettingsSchema = z
  .object({
    /** The resource endpoint, e.g. `https://my-resource.openai.azure.com` (no `/openai` suffix). */
    endpoint: z.string().url(),
    /** The deployment name (Azure routes `/openai/deployments/<deployment>/chat/completions`). */
    deployment: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'deployment: letters, digits, ".", "_" or "-" (1-64)'),
    /** The `api-version` query parameter, e.g. `2024-10-21` or `2025-04-01-preview`. */
    apiVersion: z.string().regex(/^(?:\d{4}-\d{2}-\d{2}(?:-preview)?|preview|latest|v1)$/, 'apiVersion: e.g. 2024-10-21 or 2025-04-01-preview'),
  })
  .strict();

/**
 * Vertex AI through `GoogleGenAI({ vertexai: true, project, location })`; errors classify as
 * `vertex`. Requires `kind: 'gemini'`. Vertex authenticates with Google credentials (Application
 * Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, workload identity federation, or the
 * metadata server), not an API key: the lane's keys then only name quota owners and need no secret.
 */
const VertexSettingsSchema = z
  .object({
    /** The Google Cloud project ID. */
    project: z.string().regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, 'project: a Google Cloud project ID'),
    /** A Google Cloud region (`europe-west4`, `us-central1`) or `global`. */
    location: z.string().regex(/^(?:global|[a-z]+-[a-z]+\d+)$/, 'location: a Google Cloud region such as europe-west4, or global'),
  })
  .strict();

/** How the Bedrock adapter authenticates. */
const BedrockAuthSchema = z.enum(['iam', 'api-key']);

/**
 * The lane's provider. `kind` picks the adapter; the other fields are kind-specific and checked for
 * coherence:
 * - `dialect` (openai-compatible only; default `openai`, or `azure-openai` when `azure` is set);
 * - `azure` (openai-compatible with dialect `azure-openai`; exclusive with `baseUrl`);
 * - `vertex` (gemini only);
 * - `auth` (bedrock only; default `iam`: the function's IAM role, no secret needed; `api-key`: a
 *   Bedrock API key per configured key, sent as a bearer token).
 */
export const ProviderConfigSchema = z
  .object({
    kind: z.enum(['openai-compatible', 'bedrock', 'anthropic', 'gemini']),
    model: z.string().min(1),
    /**
     * API base URL (OpenAI-compatible, Anthropic, Gemini); for Bedrock an endpoint override. Set by
     * the local stack to the fake provider, and by tests.
     */
    baseUrl: z.string().url().optional(),
    dialect: ProviderDialectSchema.optional(),
    azure: AzureOpenAiSettingsSchema.optional(),
    vertex: VertexSettingsSchema.optional(),
    auth: BedrockAuthSchema.optional(),
    keys: z.array(ProviderKeySchema).min(1),
    limits: ProviderLimitsSchema,
    /** Request timeout for one model call. */
    timeoutMs: z.number().int().positive(),
    /**
     * The output tokens a call is expected to produce, priced by admission before it has seen a
     * call's real usage (it learns the real size from each answer). Default: admission's own guess
     * (512). Set it near the schema's typical answer, so the first calls of a backlog are not booked
     * too sparsely against a tokens-per-minute limit.
     */
    expectedOutputTokens: z.number().int().positive().max(1_000_000).optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (p.dialect !== undefined && p.kind !== 'openai-compatible') {
      issue('dialect', `dialect applies only to kind openai-compatible (kind is ${p.kind})`);
    }
    if (p.azure !== undefined) {
      if (p.kind !== 'openai-compatible') issue('azure', `azure applies only to kind openai-compatible (kind is ${p.kind})`);
      else if (p.dialect !== undefined && p.dialect !== 'azure-openai') issue('dialect', `azure settings need dialect azure-openai (dialect is ${p.dialect})`);
      if (p.baseUrl !== undefined) issue('baseUrl', 'baseUrl and azure.endpoint are mutually exclusive: set azure.endpoint');
    }
    if (p.vertex !== undefined && p.kind !== 'gemini') issue('vertex', `vertex applies only to kind gemini (kind is ${p.kind})`);
    if (p.auth !== undefined && p.kind !== 'bedrock') issue('auth', `auth applies only to kind bedrock (kind is ${p.kind})`);
    const ids = p.keys.map((k) => k.id);
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicate !== undefined) issue('keys', `duplicate key id ${duplicate}`);
  });

export type ProviderConfig = z.infer<typeof ProviderConfigSchema>;

/** The classifier dialect a lane's provider speaks (`dialect`, else implied by kind and settings). */
export function providerDialect(provider: ProviderConfig): ProviderDialect {
  switch (provider.kind) {
    case 'openai-compatible':
      return provider.dialect ?? (provider.azure ? 'azure-openai' : 'openai');
    case 'gemini':
      return provider.vertex ? 'vertex' : 'gemini';
    case 'bedrock':
      return 'bedrock';
    case 'anthropic':
      return 'anthropic';
  }
}

/**
 * Whether the lane's keys need secrets: not for Bedrock with IAM auth (the function's role signs)
 * nor for Vertex (Google credentials); there the keys only name quota owners.
 */
export function providerNeedsKeySecrets(provider: ProviderConfig): boolean {
  if (provider.kind === 'bedrock') return (provider.auth ?? 'iam') === 'api-key';
  if (provider.kind === 'gemini' && provider.vertex) return false;
  return true;
}

/**
 * Provider fields that only make sense for one kind: dropped from a base when an override changes the kind
 * (a base URL is one API's: another kind's SDK would send the lane's text to it).
 */
export const KIND_SPECIFIC_PROVIDER_FIELDS = ['dialect', 'azure', 'vertex', 'auth', 'baseUrl'] as const;
