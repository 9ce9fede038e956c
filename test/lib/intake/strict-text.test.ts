/**
 * The producer takes text only when it is UTF-8, by the same rules for a file's bytes and a given string
 * (`lib/contract/text.ts`): a string holding a lone surrogate is `not_text` (it has no UTF-8 form: stored,
 * it would become U+FFFD), a file that is not UTF-8 is `not_text`, a source id holding one is bad input;
 * nothing of such a document is stored or sent. A leading byte order mark is dropped from both alike.
 * Against the run's fauxqs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sha256Hex } from '../../../lib/contract/job.js';
import { submitDocuments } from '../../../lib/intake/producer.js';
import { baseDeps, clientsIn, drain, objectKeys, setupLanes } from '../../helpers/producer-lanes.js';

const folder = mkdtempSync(join(tmpdir(), 'ratelane-strict-text-'));
after(() => rmSync(folder, { recursive: true, force: true }));

describe('producer: strict text', () => {
  it('a lone surrogate in a text, a file with 0xFF 0xFE bytes, a lone surrogate in a source id: rejected, nothing of them stored or sent', async () => {
    // Prepare
    const t = await setupLanes();
    const invalidUtf8 = join(folder, 'invalid-utf8.txt');
    writeFileSync(invalidUtf8, Buffer.concat([Buffer.from('Invoice '), Buffer.from([0xff, 0xfe]), Buffer.from(' total 10 EUR')]));
    const valid = { text: 'a perfectly fine invoice', region: 'us' };
    // Act
    const result = await submitDocuments(
      {
        documents: [
          valid,
          { text: 'Invoice \ud800 total 10 EUR', region: 'us' },
          { text: '\udfff', region: 'us' },
          { path: invalidUtf8, region: 'us' },
          { text: 'Invoice total 10 EUR', sourceId: 'invoice-\ud83d', region: 'us' },
        ],
      },
      baseDeps(t.lanes),
    );
    // Assess
    assert.deepEqual(
      result.results.map((r) => [r.status, r.error?.code]),
      [
        ['sent', undefined],
        ['rejected', 'not_text'],
        ['rejected', 'not_text'],
        ['rejected', 'not_text'],
        ['rejected', 'bad_input'],
      ],
    );
    assert.match(String(result.results[1]!.error?.message), /lone surrogate/);
    assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 1, 'only the valid document is sent');
    assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [`documents/${sha256Hex(valid.text)}.txt`]);
  });

  it('a byte order mark is not part of the text, for a file and a string alike: one job key, one stored text', async () => {
    // Prepare
    const t = await setupLanes();
    const withMark = join(folder, 'bom.txt');
    writeFileSync(withMark, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Invoice 4711 total 10 EUR')]));
    // Act
    const result = await submitDocuments(
      {
        documents: [
          { path: withMark, sourceId: 'invoice-4711', region: 'us' },
          { text: '\ufeffInvoice 4711 total 10 EUR', sourceId: 'invoice-4711', region: 'us' },
        ],
      },
      baseDeps(t.lanes),
    );
    // Assess
    assert.deepEqual(
      result.results.map((r) => r.status),
      ['sent', 'sent'],
    );
    assert.equal(result.results[0]!.idempotencyKey, result.results[1]!.idempotencyKey);
    assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [`documents/${sha256Hex('Invoice 4711 total 10 EUR')}.txt`]);
  });
});
