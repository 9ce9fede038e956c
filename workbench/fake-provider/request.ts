/**
 * Reads a Chat Completions request the way the fake provider needs it: model, message text,
 * the JSON schema asked for, the completion cap and the document between the markers.
 */
import { errorBody, invalidJsonBody, type OpenAiErrorBody } from './responses.js';
import type { FakeExtractionContext } from './types.js';

/** The document text sits in a user message between these exact markers. */
export const DOCUMENT_START = '<document>\n';
/** Closing marker of the document text. */
export const DOCUMENT_END = '\n</document>';

/** A repair call holds this line (the wording of the registry's repair prompt). */
export const REPAIR_MARKER = 'Your previous answer was:';

/** The context the fake model sees: the system message and whether any message asks for a repair. */
export function extractionContextOf(systemMessage: string | undefined, messageTexts: string[]): FakeExtractionContext {
  return { systemMessage, repair: messageTexts.some((text) => text.includes(REPAIR_MARKER)) };
}

/** The parts of a Chat Completions request the fake provider uses. */
export interface ChatRequest {
  model: string;
  /** The text of every message, in order. */
  messageTexts: string[];
  /** `response_format.json_schema.name`. */
  schemaName: string;
  /** `response_format.json_schema.schema`. */
  schema: unknown;
  /** `max_completion_tokens` (or the older `max_tokens`), `null` when not capped. */
  maxCompletionTokens: number | null;
  /** The document text found between the markers. */
  documentText: string;
  /** The prompt around the document, as the fake model sees it. */
  context: FakeExtractionContext;
}

/** A parsed request, or the 400 body that refuses it. */
export type ParsedChatRequest = { ok: true; request: ChatRequest } | { ok: false; body: OpenAiErrorBody };

/** OpenAI-like token estimate: one token per four characters, rounded up. */
export function estimateTokens(characters: number): number {
  return Math.ceil(characters / 4);
}

/** Prompt tokens of a request: all message text / 4, rounded up. */
export function promptTokensOf(request: ChatRequest): number {
  return estimateTokens(request.messageTexts.reduce((total, text) => total + text.length, 0));
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(message: string, param: string | null, code: string | null = null): ParsedChatRequest {
  return { ok: false, body: errorBody(message, 'invalid_request_error', param, code) };
}

function messageText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  return content.map((part) => (isObject(part) && part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

/** Finds the document in the last user message that carries the markers. */
function findDocument(messages: Json[], texts: string[]): string | null {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    if (messages[i]?.role !== 'user') continue;
    const text = texts[i] ?? '';
    const start = text.indexOf(DOCUMENT_START);
    if (start < 0) continue;
    const end = text.indexOf(DOCUMENT_END, start + DOCUMENT_START.length);
    if (end < 0) continue;
    return text.slice(start + DOCUMENT_START.length, end);
  }
  return null;
}

function completionCap(body: Json): number | null | 'invalid' {
  const name = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null ? 'max_completion_tokens' : 'max_tokens';
  const value = body[name];
  if (value === undefined || value === null) return null;
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : 'invalid';
}

/** Parses and validates a raw request body; refusals use OpenAI's 400 wording where one exists. */
export function parseChatRequest(raw: string): ParsedChatRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return { ok: false, body: invalidJsonBody() };
  }
  if (!isObject(body)) return invalid('The request body must be a JSON object.', null);
  if (typeof body.model !== 'string' || body.model === '') return invalid('you must provide a model parameter', null);
  if (body.messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(body.messages) || body.messages.length === 0 || !body.messages.every(isObject)) {
    return invalid("Invalid 'messages': expected a non-empty array of message objects.", 'messages', 'invalid_value');
  }
  const messages = body.messages as Json[];
  const texts: string[] = [];
  for (const [index, message] of messages.entries()) {
    const text = messageText(message.content);
    if (typeof message.role !== 'string' || text === null) {
      return invalid(`Invalid 'messages[${index}]': expected a role and a string or text-part content.`, `messages[${index}]`, 'invalid_value');
    }
    texts.push(text);
  }
  const format = body.response_format;
  if (!isObject(format) || format.type !== 'json_schema') {
    return invalid("This fake provider only answers response_format of type 'json_schema'.", 'response_format', 'invalid_value');
  }
  const jsonSchema = format.json_schema;
  if (!isObject(jsonSchema))
    return invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
  if (typeof jsonSchema.name !== 'string' || jsonSchema.name === '') {
    return invalid("Missing required parameter: 'response_format.json_schema.name'.", 'response_format.json_schema.name', 'missing_required_parameter');
  }
  const cap = completionCap(body);
  if (cap === 'invalid') return invalid("Invalid 'max_completion_tokens': expected an integer of at least 1.", 'max_completion_tokens', 'invalid_value');
  const documentText = findDocument(messages, texts);
  if (documentText === null) {
    return invalid(`No document found: a user message must hold the text between "<document>\\n" and "\\n</document>".`, 'messages', null);
  }
  const systemIndex = messages.findIndex((message) => message.role === 'system' || message.role === 'developer');
  const context = extractionContextOf(systemIndex < 0 ? undefined : texts[systemIndex], texts);
  return {
    ok: true,
    request: {
      model: body.model,
      messageTexts: texts,
      schemaName: jsonSchema.name,
      schema: jsonSchema.schema,
      maxCompletionTokens: cap,
      documentText,
      context,
    },
  };
}
