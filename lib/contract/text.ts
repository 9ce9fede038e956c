/**
 * What counts as text, the same wherever text enters (a file, `--text`, the live API's body, a stored
 * document, a batch output line) and the same for bytes and strings:
 * - it is UTF-8: bytes are decoded strictly (a byte sequence that is not UTF-8 is not text, never
 *   replacement characters sent to a model or stored in a job); a string must be well-formed (a lone
 *   surrogate, U+D800..U+DFFF outside a pair, has no UTF-8 form); a leading byte order mark is not part
 *   of the text;
 * - a string someone else decoded from bytes leniently (API Gateway's text body, the command line's
 *   arguments) holds no U+FFFD: there, a replacement character may be a byte that was not UTF-8;
 * - a document's text is not binary (NUL bytes, or mostly control characters: a PDF, an image, a zip)
 *   and has at least one visible character (whitespace, zero-width and other format characters alone
 *   are an empty document).
 */

/** Why input is not a document's text. */
type TextProblem = 'not_text' | 'empty_document';

/** The verdict on a document's bytes or string: its text, or what is wrong with it (with a detail naming sizes only). */
export type TextVerdict = { ok: true; text: string } | { ok: false; problem: TextProblem; detail: string };

/** Text, decoded strictly; or why the input is not text (a detail naming sizes only). */
type DecodedText = { ok: true; text: string } | { ok: false; problem: 'not_text'; detail: string };

/** How a string came to be, for {@link decodeText}. */
interface DecodeOptions {
  /**
   * The string was decoded from bytes by someone else, who replaces what is not UTF-8 with U+FFFD
   * (API Gateway's text body, Node's command-line arguments): a U+FFFD in it makes it `not_text`.
   */
  decodedLeniently?: boolean;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this counts
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f]/g;
/** A visible character: a letter, digit, punctuation or symbol (not a separator, control or format character). */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}\p{M}]/u;
const BYTE_ORDER_MARK = '\ufeff';
const REPLACEMENT_CHARACTER = '\ufffd';

/** More than this share of control characters (besides tab, newline, carriage return, form feed) is binary. */
const MAX_CONTROL_SHARE = 0.1;

/** `String.prototype.isWellFormed` (Node 20; ES2024, beyond the ES2022 library this project compiles against). */
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Decodes bytes strictly as UTF-8, or checks that a string is well-formed (and, when it was decoded
 * leniently upstream, holds no U+FFFD); a leading byte order mark is dropped. The one decoder of text
 * entering ratelane; {@link textOf} adds a document's checks.
 */
export function decodeText(input: Uint8Array | string, options: DecodeOptions = {}): DecodedText {
  const notText = (detail: string): DecodedText => ({ ok: false, problem: 'not_text', detail });
  let text: string;
  if (typeof input === 'string') {
    if (!isWellFormed(input)) return notText(`${input.length} characters with a lone surrogate (U+D800..U+DFFF outside a pair): not UTF-8 text`);
    if (options.decodedLeniently && input.includes(REPLACEMENT_CHARACTER)) {
      return notText(`${input.length} characters with U+FFFD, where bytes that were not UTF-8 were replaced on the way in`);
    }
    text = input.startsWith(BYTE_ORDER_MARK) ? input.slice(1) : input;
  } else {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(input);
    } catch {
      return notText(`${input.byteLength} bytes that are not UTF-8 text`);
    }
  }
  return { ok: true, text };
}

/** Decodes (see {@link decodeText}) and checks a document's bytes, or a string given by a caller, by the same rules. */
export function textOf(input: Uint8Array | string): TextVerdict {
  const decoded = decodeText(input);
  if (!decoded.ok) return decoded;
  const { text } = decoded;
  const bytes = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (text.includes('\u0000')) return { ok: false, problem: 'not_text', detail: `${bytes} bytes with NUL bytes (binary)` };
  const controls = text.match(CONTROL)?.length ?? 0;
  if (text.length > 0 && controls / text.length > MAX_CONTROL_SHARE) {
    return { ok: false, problem: 'not_text', detail: `${bytes} bytes, ${controls} of them control characters (binary)` };
  }
  if (!VISIBLE.test(text)) {
    const detail =
      bytes === 0
        ? 'document is empty'
        : text.trim() === ''
          ? `document is whitespace only (${bytes} bytes)`
          : `document has no visible character (${bytes} bytes)`;
    return { ok: false, problem: 'empty_document', detail };
  }
  return { ok: true, text };
}
