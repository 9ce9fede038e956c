/**
 * `auth`: the key itself is invalid, revoked, leaked, suspended or lacks permission — no wait helps
 * and no other call with that key will succeed until a person acts, but the lane's other keys may.
 * Used by `classify.ts`; pure.
 *
 * What is not about the key stays out: a region or country the provider does not serve, a model the
 * account has no access to (an entitlement), a content-policy refusal, a 404 model not found, a plain
 * 400 — those are `not_rate_limit` (or `billing` when they are a plan gate, decided before this).
 */

/** Codes, types, statuses and reasons that name the credential. */
const AUTH_CODES = [
  // OpenAI, Groq, Mistral, xAI… (`code: invalid_api_key`), Anthropic (`authentication_error`, `permission_error`).
  'invalid_api_key',
  'authentication_error',
  'permission_error',
  'invalid_authentication',
  'authenticationerror',
  'permissiondeniederror',
  // Gemini / Vertex: google.rpc status and ErrorInfo reasons.
  'unauthenticated',
  'api_key_invalid',
  'api_key_expired',
  'api_key_service_blocked',
  'api_key_http_referrer_blocked',
  'api_key_ip_address_blocked',
  'consumer_suspended',
  'consumer_invalid',
  'credentials_missing',
  'access_token_expired',
  'access_token_type_unsupported',
  'iam_permission_denied',
  'service_disabled',
  // Bedrock / AWS.
  'unrecognizedclientexception',
  'invalidclienttokenid',
  'invalidsignatureexception',
  'incompletesignatureexception',
  'missingauthenticationtokenexception',
  'expiredtokenexception',
  'accessdeniedexception',
];

/** Codes that name the credential only on a 401/403 (elsewhere they may mean something else). */
const AUTH_CODES_ON_401_403 = ['permission_denied', 'unauthorized', 'forbidden', 'accessdenied', 'access_denied'];

/** Wording that names the key or the caller's credentials. */
const AUTH_TEXT =
  /invalid (?:api[ _-]?key|x-api-key|bearer token|subscription key|authentication|api token|access token)|incorrect api key|api key (?:not valid|not found|(?:has )?expired|is invalid|is disabled|was reported as leaked)|api keys are not supported by this api|(?:you didn't|you did not|must) provide an api key|no auth credentials found|missing authentication token|security token included in the request is (?:invalid|expired)|request signature we calculated does not match|request had invalid authentication credentials|consumer '[^']{1,200}' has been suspended|your account is not authorized to (?:invoke|access|perform)|is not authorized to perform:|permission '[^']{1,200}' denied on resource|permission denied on resource project|method doesn't allow unregistered callers|your api key does not have permission|oauth token does not meet scope requirement|does not have permission to access this api|api has not been used in project|authentication (?:failed|required)|unauthenticated|\bunauthorized\b|permission denied/;

/** A region, a model entitlement or a policy refusal: not about the key, whatever else the response says. */
const NOT_THE_KEY =
  /unsupported_country_region_territory|country, region, or territory not supported|user location is not supported|not available in your (?:country|region|location)|request not allowed|(?:don't|do not|doesn't|does not) have access to (?:the |this )?model|model access is denied|model (?:is )?not (?:found|available|supported)|does not exist or you do not have access|aws marketplace|is not available for your (?:account|organization|tier)|content[_ ](?:policy|filter|management)|responsibleaipolicyviolation|safety (?:system|policy)|prohibited content/;

/**
 * Whether the response says the key (or the caller's credentials) is the problem. `text` is the
 * lower-cased messages, `codes` the lower-cased codes. A 429 or a 5xx is never `auth`, nor a 404;
 * a 401 always is (unless the body says the problem is a region, a model or a policy); a 400/403
 * (or an unknown status) needs a code or wording that names the credential.
 */
export function detectAuth(status: number, text: string, codes: Set<string>): boolean {
  if (status === 429 || status === 404 || status === 402 || status >= 500) return false;
  if (status > 0 && status < 400) return false;
  if (NOT_THE_KEY.test(text) || codes.has('unsupported_country_region_territory') || codes.has('model_not_found')) return false;
  if (status === 401) return true;
  if (AUTH_CODES.some((code) => codes.has(code))) return true;
  const keyStatus = status === 403 || codes.has('403') || codes.has('401');
  if (keyStatus && AUTH_CODES_ON_401_403.some((code) => codes.has(code))) return true;
  if ((status === 0 || status === 400 || status === 403) && AUTH_TEXT.test(text)) return true;
  return false;
}
