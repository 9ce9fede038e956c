/**
 * The job sets of the bench scenarios, and what each job costs the fake provider in tokens.
 *
 * `uneven-tokens` submits the corpus as `corpusDocuments` does, but one job in ten is 5–10× longer
 * (5.5, 6.5, … 9.5 times, each within half a time): its document's closing paragraph (payment terms, a
 * greeting: text after the totals) is repeated until the text is about that many times its length. The invoice stays valid and its expected
 * object unchanged: a document is lengthened only when the fake provider's extractor still answers
 * exactly the object it answers for the original (checked here; a corpus document that fails the
 * check, such as one whose closing paragraph is a terms-and-conditions excerpt that tips the language
 * detection, is replaced by the next one of the same language that passes).
 */
import { getExtractionPrompt, getExtractionSchema } from '../../../../lib/contract/schemas/registry.js';
import { isDeepStrictEqual } from 'node:util';
import type { DocumentInput } from '../../../../lib/intake/producer.js';
import { extractForSchema } from '../../../fake-provider/extractors/extractors.js';
import { estimateTokens } from '../../../fake-provider/wire/dialect.js';
import { corpusDocuments } from '../../lanes.js';

/** One job in {@link LONG_EVERY} is long (the job at index `i` with `i % LONG_EVERY === LONG_PHASE`). */
export const LONG_EVERY = 10;
const LONG_PHASE = 4;
/**
 * How much longer a long document is than the one it is made from, by its place: 5.5, 6.5, … 9.5, 5.5, …
 * Each is met within half a time (a closing paragraph is shorter than the rest), so every long
 * document is 5–10 times its original's length.
 */
const LONG_FACTORS: readonly number[] = [5.5, 6.5, 7.5, 8.5, 9.5];
/** How far a long document's length factor may be from the one asked. */
const FACTOR_TOLERANCE = 0.5;

/** A document of a scenario's job set, with whether it was lengthened and by how much. */
export interface ScenarioDocument extends DocumentInput {
  text: string;
  /** How many times the original's length the text is (1: not lengthened). */
  lengthFactor: number;
}

/** What the fake model answers for `text` (null when its extractor cannot read it). */
function fakeAnswer(text: string, schemaVersion: string): unknown {
  try {
    return extractForSchema(text, getExtractionSchema(schemaVersion).jsonSchemaName);
  } catch {
    return null;
  }
}

/**
 * `text` about `factor` times as long (the closest whole number of repeats of its closing paragraph,
 * the text after its last blank line); null when that is more than half a time off `factor`, or when
 * the fake model would answer the longer text differently (or not at all).
 */
function lengthenDocument(text: string, schemaVersion: string, factor: number): string | null {
  const body = text.replace(/\s+$/u, '');
  const trailer = body.split(/\n[ \t]*\n/u).at(-1) ?? '';
  if (factor <= 1 || trailer.trim() === '' || trailer === body) return null;
  const target = text.length * factor;
  const copies = Math.max(1, Math.round((target - body.length - 1) / (trailer.length + 2)));
  const long = `${body}${`\n\n${trailer}`.repeat(copies)}\n`;
  if (Math.abs(long.length / text.length - factor) > FACTOR_TOLERANCE) return null;
  const answer = fakeAnswer(text, schemaVersion);
  return answer !== null && isDeepStrictEqual(fakeAnswer(long, schemaVersion), answer) ? long : null;
}

/**
 * The `uneven-tokens` job set: {@link corpusDocuments}`(jobs)`, with every {@link LONG_EVERY}th job
 * lengthened {@link LONG_FACTORS} times (its source id gets `#long<i>`). Deterministic.
 */
export function unevenDocuments(jobs: number): ScenarioDocument[] {
  const base = corpusDocuments(jobs);
  const cache = new Map<string, string | null>();
  const lengthened = (doc: DocumentInput, factor: number): string | null => {
    const key = `${factor}\u0000${doc.text}`;
    if (!cache.has(key)) cache.set(key, lengthenDocument(doc.text ?? '', doc.schemaVersion ?? '', factor));
    return cache.get(key) ?? null;
  };
  return base.map((doc, i) => {
    const plain: ScenarioDocument = { ...doc, text: doc.text ?? '', lengthFactor: 1 };
    if (i % LONG_EVERY !== LONG_PHASE) return plain;
    const factor = LONG_FACTORS[Math.floor(i / LONG_EVERY) % LONG_FACTORS.length]!;
    // This document, or the next one of the same lane whose longer text still reads the same.
    for (let step = 0; step < base.length; step++) {
      const candidate = base[(i + step) % base.length]!;
      if (candidate.region !== doc.region) continue;
      const text = lengthened(candidate, factor);
      if (text === null) continue;
      const sourceId = `${(candidate.sourceId ?? '').replace(/#\d+$/u, '')}#long${i}`;
      return { ...candidate, text, sourceId, lengthFactor: text.length / (candidate.text ?? '').length };
    }
    return plain;
  });
}

/**
 * What one successful call for `doc` costs its key's tokens-per-minute budget at the fake provider:
 * the prompt's tokens (all message text / 4, rounded up, as the provider counts them) plus the
 * answer's (its JSON / 4), since the consumer sets no completion cap.
 */
export function providerTokensOf(doc: Pick<DocumentInput, 'text' | 'schemaVersion' | 'promptVersion'>): number {
  const text = doc.text ?? '';
  const schemaVersion = doc.schemaVersion ?? '';
  const prompt = getExtractionPrompt(schemaVersion, doc.promptVersion ?? '');
  const promptChars = (prompt?.buildMessages(text) ?? []).reduce((n, m) => n + m.content.length, 0);
  const answer = JSON.stringify(fakeAnswer(text, schemaVersion)) ?? 'null';
  return estimateTokens(promptChars) + estimateTokens(answer.length);
}
