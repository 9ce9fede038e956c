/**
 * The one flags helper of the commands, on Node's `util.parseArgs` (strict: unknown options and
 * positionals are usage errors). A command declares its flags once — numbers with a range, booleans,
 * strings, repeated strings, JSON values — and gets typed values back; every bad value becomes a
 * {@link UsageError} with the same wording in every command. `--help` / `-h` is always understood.
 *
 * ```ts
 * const v = parseFlags(argv, { jobs: numberFlag({ min: 1, max: 100, fallback: 10, round: 'floor' }), json: booleanFlag() });
 * v.jobs; // number
 * ```
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { ServiceEndpoints } from '../platform/clients.js';
import { UsageError } from './command.js';

/** One flag: how `parseArgs` reads it, and how its raw value becomes the typed one. */
export interface Flag<T> {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  readonly short?: string;
  /** Turns the raw value (undefined when the flag is absent) into the flag's value. @throws {UsageError} */
  read(raw: unknown, name: string): T;
}

/** The values of a set of flags, by flag name. */
export type FlagValues<S extends Record<string, Flag<unknown>>> = { [K in keyof S]: S[K] extends Flag<infer T> ? T : never };

/** How a number flag is checked and rounded. */
export interface NumberFlagOptions {
  min: number;
  max: number;
  /** `max` itself is out of range (the range is `[min, max)`). */
  belowMax?: boolean;
  /** Only whole numbers are accepted. */
  integer?: boolean;
  /** Rounds the (range-checked) value down to a whole number. */
  round?: 'floor';
}

/** Spread into {@link NumberFlagOptions} for a count: a fraction is accepted and rounded down. */
export const ROUND_DOWN = { round: 'floor' } as const;

/** A number flag in a range; `fallback` when it is absent (else undefined). */
export function numberFlag(options: NumberFlagOptions & { fallback: number }): Flag<number>;
export function numberFlag(options: NumberFlagOptions): Flag<number | undefined>;
export function numberFlag(options: NumberFlagOptions & { fallback?: number }): Flag<number | undefined> {
  return {
    type: 'string',
    read: (raw, name) => (raw === undefined ? options.fallback : checkNumber(name, raw, options)),
  };
}

/** Checks one number value against a range (a blank string is not a number). @throws {UsageError} */
function checkNumber(name: string, raw: unknown, options: NumberFlagOptions): number {
  const value = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  const inRange = Number.isFinite(value) && value >= options.min && (options.belowMax ? value < options.max : value <= options.max);
  if (!inRange || (options.integer && !Number.isInteger(value))) {
    const range = options.belowMax ? `[${options.min}, ${options.max})` : `${options.min}..${options.max}`;
    throw new UsageError(`--${name} must be ${options.integer ? 'an integer' : 'a number'} in ${range}, got "${String(raw)}"`);
  }
  return options.round === 'floor' ? Math.floor(value) : value;
}

/** A boolean flag: true when given. */
export function booleanFlag(options: { short?: string } = {}): Flag<boolean> {
  return { type: 'boolean', ...options, read: (raw) => raw === true };
}

/** A string flag; undefined when absent. */
export function stringFlag(): Flag<string | undefined> {
  return { type: 'string', read: (raw) => (typeof raw === 'string' ? raw : undefined) };
}

/** A string flag that may be given several times, in order; empty when absent. */
export function repeatedFlag(): Flag<string[]> {
  return { type: 'string', multiple: true, read: (raw) => (Array.isArray(raw) ? raw.map(String) : []) };
}

/** `--json`: print the result as one JSON object on stdout (the last line, for the long-running commands). */
export function jsonFlag(): Flag<boolean> {
  return booleanFlag();
}

/** Settings of {@link parseFlags}. */
export interface ParseFlagsOptions {
  /** The message of an unknown option (default: `util.parseArgs`'s own). */
  unknownOption?: (option: string) => string;
}

/**
 * Parses `argv` against the flags. `--help` or `-h` anywhere throws {@link UsageError.help}.
 * @throws {UsageError} for an unknown option, a missing value, a positional argument or a bad value
 */
export function parseFlags<S extends Record<string, Flag<unknown>>>(argv: readonly string[], flags: S, options: ParseFlagsOptions = {}): FlagValues<S> {
  const declared = Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => [
      name,
      { type: flag.type, ...(flag.multiple ? { multiple: true } : {}), ...(flag.short ? { short: flag.short } : {}) },
    ]),
  );
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: [...argv], strict: true, allowPositionals: false, options: { ...declared, help: { type: 'boolean', short: 'h' } } })
      .values as Record<string, unknown>;
  } catch (error) {
    const unknown = (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec((error as Error).message)?.[1] : undefined;
    const message = unknown !== undefined && options.unknownOption ? options.unknownOption(unknown) : (error as Error).message;
    throw new UsageError(message, { cause: error });
  }
  if (values.help === true) throw UsageError.help();
  return Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, flag.read(values[name], name)])) as FlagValues<S>;
}

/** An endpoint: an http(s) URL only (never `file:` or another scheme). */
const endpoint = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

const EndpointsSchema = z.object({ sqs: endpoint, s3: endpoint, dynamodb: endpoint.optional() }).strict();

/**
 * Parses local endpoints JSON (`--endpoints` or `RATELANE_ENDPOINTS`): `{"sqs","s3","dynamodb"?}`;
 * without `dynamodb` the SQS endpoint stands in for it (the producer never touches DynamoDB).
 *
 * @param origin how the user gave it, for the message (`--endpoints`, `RATELANE_ENDPOINTS`)
 * @throws {UsageError} when it is not JSON or not that shape
 */
function parseEndpoints(raw: string, origin: string): ServiceEndpoints {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new UsageError(`${origin} is not valid JSON; expected {"sqs":"http://...","s3":"http://..."}`, { cause: error });
  }
  const parsed = EndpointsSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`${origin}: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  return { sqs: parsed.data.sqs, s3: parsed.data.s3, dynamodb: parsed.data.dynamodb ?? parsed.data.sqs };
}

/**
 * The endpoints a command talks to: `--endpoints` when given, else `RATELANE_ENDPOINTS` from `env`,
 * else undefined (real AWS). @throws {UsageError}
 */
export function endpointsFrom(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): ServiceEndpoints | undefined {
  const raw = flag ?? env.RATELANE_ENDPOINTS;
  return raw ? parseEndpoints(raw, flag !== undefined ? '--endpoints' : 'RATELANE_ENDPOINTS') : undefined;
}
