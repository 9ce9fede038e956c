/**
 * Model adapter for Amazon Bedrock Converse through `@aws-sdk/client-bedrock-runtime`. Structured
 * output comes through one tool whose `inputSchema.json` is the JSON schema, forced with
 * `toolChoice: { tool: { name } }`; the tool call's input is the object. The client is regional
 * (the lane's region), makes exactly one attempt (`maxAttempts: 1`: ratelane owns retries), and maps
 * Bedrock's exceptions through the provider classifier with provider `bedrock`.
 *
 * Authentication (`auth`): `iam` uses the AWS credential chain (the Lambda's IAM role, or the
 * explicit `credentials` option) and ignores the request's `apiKey`; `api-key` sends the request's
 * `apiKey` (a Bedrock API key) as a bearer token (`Authorization: Bearer …`, the SDK's
 * `httpBearerAuth` scheme). Without `auth`: an empty `apiKey` means IAM, a non-empty one an API key.
 */
import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  ConverseCommand,
  type ContentBlock,
  type ConverseCommandInput,
  type Message,
  type SystemContentBlock,
} from '@aws-sdk/client-bedrock-runtime';
import { classifyProviderError, isRequestTooLarge } from './classify/classify.js';
import { ProviderError, ProviderTransportError, type ExtractionRequest, type ExtractionResponse, type ModelAdapter } from './model.js';
import { startDeadline } from './deadline.js';

const PROVIDER = 'bedrock' as const;

/** Settings of the Bedrock adapter. */
export interface BedrockAdapterOptions {
  /** Model ID, inference profile ID or ARN (e.g. `eu.anthropic.claude-sonnet-4-20250514-v1:0`). */
  model: string;
  /** The lane's region: the Bedrock Runtime endpoint used is this region's. */
  region: string;
  /** Endpoint override (tests, VPC endpoints). Default: the region's public endpoint. */
  endpoint?: string;
  timeoutMs: number;
  /** `iam` (credential chain) or `api-key` (bearer token). Default: by whether the request has a key. */
  auth?: 'iam' | 'api-key';
  /** Explicit AWS credentials (tests); default the SDK's credential chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Output cap when the request sets none (Converse requires none, models default differently). */
  defaultMaxOutputTokens?: number;
  now?: () => Date;
}

/** Bedrock tool names must match `[a-zA-Z0-9_-]{1,64}`. */
export function bedrockToolName(schemaName: string): string {
  const cleaned = schemaName.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return cleaned === '' ? 'extract' : cleaned;
}

/** Creates the adapter; one client per auth mode/API key (clients keep sockets). */
export function createBedrockAdapter(options: BedrockAdapterOptions): ModelAdapter {
  const clients = new Map<string, BedrockRuntimeClient>();
  const clientFor = (requestKey: string): BedrockRuntimeClient => {
    const apiKey = options.auth === 'iam' ? '' : requestKey;
    let client = clients.get(apiKey);
    if (!client) {
      client = new BedrockRuntimeClient({
        region: options.region,
        maxAttempts: 1,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(apiKey === ''
          ? options.credentials
            ? { credentials: options.credentials }
            : {}
          : { token: { token: apiKey }, authSchemePreference: ['httpBearerAuth'] }),
      });
      clients.set(apiKey, client);
    }
    return client;
  };

  return {
    provider: PROVIDER,
    async extract(request: ExtractionRequest): Promise<ExtractionResponse> {
      if (options.auth === 'api-key' && request.apiKey === '') {
        throw new TypeError(`${PROVIDER}: auth is api-key but the key has no secret`);
      }
      const toolName = bedrockToolName(request.jsonSchemaName);
      const input = buildConverseInput(options, request, toolName);
      const deadline = startDeadline(options.timeoutMs, request.signal);
      try {
        const output = await clientFor(request.apiKey).send(new ConverseCommand(input), { abortSignal: deadline.signal });
        const blocks: ContentBlock[] = output.output?.message?.content ?? [];
        const toolUse = blocks.find((b) => b.toolUse?.name === toolName)?.toolUse ?? blocks.find((b) => b.toolUse)?.toolUse;
        const content =
          toolUse !== undefined
            ? (JSON.stringify(toolUse.input ?? null) ?? 'null')
            : blocks
                .map((b) => b.text ?? '')
                .join('')
                .trim();
        return {
          content,
          model: options.model,
          usage: { inputTokens: output.usage?.inputTokens ?? 0, outputTokens: output.usage?.outputTokens ?? 0 },
        };
      } catch (error) {
        throw mapBedrockError(error, options.now?.() ?? new Date(), deadline.expired() || (request.signal?.aborted ?? false));
      } finally {
        deadline.dispose();
      }
    },
  };
}

function buildConverseInput(options: BedrockAdapterOptions, request: ExtractionRequest, toolName: string): ConverseCommandInput {
  const system: SystemContentBlock[] = request.messages.filter((m) => m.role === 'system').map((m) => ({ text: m.content }));
  const messages: Message[] = request.messages
    .filter((m) => m.role !== 'system')
    .map((m) => ({ role: m.role === 'assistant' ? 'assistant' : 'user', content: [{ text: m.content }] }));
  const maxTokens = request.maxOutputTokens ?? options.defaultMaxOutputTokens;
  return {
    modelId: options.model,
    ...(system.length > 0 ? { system } : {}),
    messages,
    toolConfig: {
      tools: [
        {
          toolSpec: {
            name: toolName,
            description: `Record the extracted ${request.jsonSchemaName} object. The input must follow the JSON schema exactly.`,
            inputSchema: { json: request.jsonSchema as never },
          },
        },
      ],
      toolChoice: { tool: { name: toolName } },
    },
    ...(maxTokens ? { inferenceConfig: { maxTokens } } : {}),
  };
}

function headersOf(error: unknown): Record<string, string> {
  const raw = (error as { $response?: { headers?: Record<string, string | undefined> } }).$response?.headers;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw ?? {})) if (typeof value === 'string') out[name.toLowerCase()] = value;
  return out;
}

const TIMEOUT_NAMES = new Set(['AbortError', 'TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'ECONNABORTED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Maps a Bedrock Runtime SDK error to {@link ProviderError} (status from `$metadata.httpStatusCode`,
 * headers from the raw `$response`, body `{ message, __type }`) or {@link ProviderTransportError}.
 * `aborted` says the adapter's deadline or the caller's signal fired.
 */
function mapBedrockError(error: unknown, now: Date, aborted = false): Error {
  if (error instanceof BedrockRuntimeServiceException) {
    const meta = error.$metadata;
    const status = meta?.httpStatusCode ?? (error.$fault === 'server' ? 500 : 400);
    const headers = headersOf(error);
    if (!headers['x-amzn-errortype']) headers['x-amzn-errortype'] = error.name;
    const body = { message: error.message, __type: error.name };
    const classification = classifyProviderError({ provider: PROVIDER, status, headers, body, now });
    return new ProviderError(`${PROVIDER}: HTTP ${status} ${error.name} (${classification.kind})`, PROVIDER, status, classification, {
      cause: error,
      requestTooLarge: isRequestTooLarge({ provider: PROVIDER, status, body }),
    });
  }
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { code?: unknown } | null)?.code;
  if (aborted || (typeof name === 'string' && TIMEOUT_NAMES.has(name)) || (typeof code === 'string' && TIMEOUT_CODES.has(code))) {
    return new ProviderTransportError(`${PROVIDER}: request timed out`, PROVIDER, true, { cause: error });
  }
  return new ProviderTransportError(`${PROVIDER}: connection failed`, PROVIDER, false, { cause: error });
}
