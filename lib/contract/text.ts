/**
 * What counts as a document's text, the same at intake and in the consumer: UTF-8 decoded strictly (a
 * byte sequence that is not UTF-8 is not text, never replacement characters sent to a model), no
 * binary (NUL bytes, or mostly control characters: a PDF, an image, a zip), and at least one visible
 * character (whitespace, zero-width and other format characters alone are an empty document).
 */

/** Why bytes are not a document's text. */
type TextProblem = 'not_text' | 'empty_document';

/** The verdict on a document's bytes: its text, or what is wrong with it (with a detail naming sizes only). */
export type TextVerdict = { ok: true; text: string } | { ok: false; problem: TextProblem; detail: string };

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this counts
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f]/g;
/** A visible character: a letter, digit, punctuation or symbol (not a separator, control or format character). */
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}\p{M}]/u;

/** More than this share of control characters (besides tab, newline, carriage return, form feed) is binary. */
const MAX_CONTROL_SHARE = 0.1;

/** Decodes and checks a document's bytes. */
export function textOf(bytes: Uint8Array): TextVerdict {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { ok: false, problem: 'not_text', detail: `${bytes.byteLength} bytes that are not UTF-8 text` };
  }
  return checkText(text, bytes.byteLength);
}

/** Checks text already decoded (a string given by a caller). */
export function checkText(text: string, bytes = Buffer.byteLength(text, 'utf8')): TextVerdict {
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
