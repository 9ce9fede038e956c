/**
 * The one decoder of text (`lib/contract/text.ts`): bytes and strings through the same rules — UTF-8
 * only (bytes decoded strictly, a string with no lone surrogate), a leading byte order mark dropped,
 * U+FFFD refused in a string someone decoded leniently — and a document's checks on top (`textOf`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeText, textOf } from '../../../lib/contract/text.js';

const bytes = (...parts: (string | number[])[]): Uint8Array => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

describe('text: one decoder for bytes and strings', () => {
  it('a string holding a lone surrogate is not text, as bytes that are not UTF-8 are not', () => {
    // Prepare
    const strings = ['Invoice \ud800 total', '\udc00', 'total \ud83d', '\ude00 then \ud83d'];
    const byteInputs = [bytes('Invoice ', [0xff, 0xfe], ' total'), bytes([0xed, 0xa0, 0x80]), bytes('a', [0xc0, 0xaf]), bytes('a', [0xf4, 0x90, 0x80, 0x80])];
    // Act
    const verdicts = [...strings, ...byteInputs].map((input) => textOf(input));
    // Assess
    for (const verdict of verdicts) assert.equal(verdict.ok ? 'ok' : verdict.problem, 'not_text');
    assert.match(JSON.stringify(verdicts[0]), /lone surrogate/);
  });

  it('the same text as a string and as its UTF-8 bytes gets the same verdict, a byte order mark dropped from both', () => {
    // Prepare
    const texts = ['Invoice 4711 \ud83d\ude00 total', '\ufeffInvoice \ufffd', '\ufeff', ' \n\t ', '\u0000\u0000', '\u200b\u2060'];
    // Act / Assess
    for (const text of texts) assert.deepEqual(textOf(text), textOf(Buffer.from(text, 'utf8')), JSON.stringify(text));
    assert.deepEqual(textOf('\ufeffInvoice'), { ok: true, text: 'Invoice' });
  });

  it('U+FFFD is refused only in a string decoded leniently upstream (a text body, a command-line argument)', () => {
    // Act
    const given = decodeText('Invoice \ufffd');
    const upstream = decodeText('Invoice \ufffd', { decodedLeniently: true });
    const fromBytes = decodeText(bytes('Invoice ', [0xef, 0xbf, 0xbd]));
    // Assess
    assert.deepEqual(given, { ok: true, text: 'Invoice \ufffd' });
    assert.equal(upstream.ok, false);
    assert.match(JSON.stringify(upstream), /U\+FFFD/);
    assert.deepEqual(fromBytes, { ok: true, text: 'Invoice \ufffd' });
  });
});
