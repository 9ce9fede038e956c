/**
 * The producer's intake against the run's real fauxqs: each bad document is rejected with its reason
 * while the valid ones are still sent, or (with `atomic`) the whole submission is rejected with a
 * typed error and nothing is stored or sent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { JobSchema, sha256Hex } from '../../../lib/contract/job.js';
import { SubmissionRejectedError, submitDocuments, type SubmitDeps } from '../../../lib/intake/producer.js';
import { baseDeps, clientsIn, drain, objectKeys, setupLanes } from '../../helpers/producer-lanes.js';

/** Files that are not text: a PDF's bytes, and Latin-1 (not UTF-8). */
const notText = mkdtempSync(join(tmpdir(), 'ratelane-not-text-'));
writeFileSync(join(notText, 'scan.pdf'), Buffer.concat([Buffer.from('%PDF-1.7\n%'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0, 0, 1, 2, 3, 0x0b])]));
writeFileSync(join(notText, 'latin1.txt'), Buffer.from('Rechnung f\u00fcr M\u00fcller', 'latin1'));
after(() => rmSync(notText, { recursive: true, force: true }));

describe('producer: rejections', () => {
  const valid = { text: 'a perfectly fine invoice', region: 'us' };
  const badCases: { name: string; doc: Record<string, unknown>; reason: string; deps?: Partial<SubmitDeps> }[] = [
    { name: 'unknown region', doc: { text: 'x', region: 'mars' }, reason: 'unknown_region' },
    { name: 'empty text', doc: { text: '', region: 'us' }, reason: 'empty_document' },
    { name: 'whitespace-only text', doc: { text: ' \n\t\u00a0 ', region: 'us' }, reason: 'empty_document' },
    { name: 'zero-width-only text', doc: { text: '\u200b\u200c\u200d\ufeff\u2060', region: 'us' }, reason: 'empty_document' },
    { name: 'NUL-only text', doc: { text: '\u0000'.repeat(16), region: 'us' }, reason: 'not_text' },
    { name: 'a PDF file', doc: { path: join(notText, 'scan.pdf'), region: 'us' }, reason: 'not_text' },
    { name: 'a file that is not UTF-8', doc: { path: join(notText, 'latin1.txt'), region: 'us' }, reason: 'not_text' },
    { name: 'over max bytes', doc: { text: 'SECRET-OVERSIZE '.repeat(20), region: 'us' }, reason: 'document_too_large', deps: { maxDocumentBytes: 100 } },
    { name: 'over token budget', doc: { text: 'y'.repeat(400), region: 'us' }, reason: 'document_too_large', deps: { maxInputTokens: 50 } },
    {
      name: 'unknown version',
      doc: { text: 'x', region: 'us', schemaVersion: 'invoice@9' },
      reason: 'unknown_version',
      deps: { isKnownVersion: (s) => s === 'invoice@1' },
    },
    { name: 'malformed version', doc: { text: 'x', region: 'us', promptVersion: 'latest' }, reason: 'unknown_version' },
    { name: 'past deadline', doc: { text: 'x', region: 'us', deadline: '2001-01-01T00:00:00Z' }, reason: 'deadline_passed' },
    { name: 'both text and path', doc: { text: 'x', path: 'a.txt', region: 'us' }, reason: 'bad_input' },
    { name: 'neither text nor path', doc: { region: 'us' }, reason: 'bad_input' },
    { name: 'missing file', doc: { path: '/nonexistent/ratelane/doc.txt', region: 'us' }, reason: 'bad_input' },
    { name: 'bad job id', doc: { text: 'x', region: 'us', jobId: 'has spaces' }, reason: 'bad_input' },
  ];

  describe('by default, rejects each bad document with its reason and still sends the valid ones', () => {
    for (const c of badCases) {
      it(c.name, async () => {
        // Prepare
        const t = await setupLanes();
        const deps = baseDeps(t.lanes, c.deps);
        // Act
        const result = await submitDocuments({ documents: [valid, c.doc as never] }, deps);
        // Assess
        assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [2, 1, 0, 1]);
        assert.equal(result.results[0]!.status, 'sent');
        const bad = result.results[1]!;
        assert.equal(bad.status, 'rejected');
        assert.equal(bad.index, 1);
        assert.equal(bad.error?.code, c.reason);
        assert.equal(bad.error?.stage, 'validation');
        assert.ok((bad.error?.message.length ?? 0) > 5);
        assert.equal(bad.messageId, undefined);
        assert.ok(!JSON.stringify(result).includes('SECRET-OVERSIZE'), 'no document text in the result');
        const messages = await drain(clientsIn('us-east-1').sqs, t.queueUrl.us);
        assert.deepEqual(
          messages.map((m) => m.MessageId),
          [result.results[0]!.messageId],
        );
        assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), [`documents/${sha256Hex(valid.text)}.txt`]);
      });
    }

    it('a mixed batch across lanes sends exactly the valid documents and names each bad one', async () => {
      // Prepare
      const t = await setupLanes();
      const documents = [
        { text: '', region: 'us' },
        { text: 'good us invoice 1', region: 'us', sourceId: 'g-us-1' },
        { text: 'x', region: 'ap' },
        { text: 'good eu invoice', region: 'eu', sourceId: 'g-eu', jobId: 'j1' },
        { text: 'w', region: 'eu', jobId: 'j1' },
        { text: 'SECRET-OVERSIZE '.repeat(20), region: 'us', sourceId: 'too-big' },
        { text: 'good us invoice 2', region: 'us-east-1', sourceId: 'g-us-2' },
      ];
      // Act
      const result = await submitDocuments({ documents }, baseDeps(t.lanes, { maxDocumentBytes: 100 }));
      // Assess
      assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [7, 3, 0, 4]);
      assert.deepEqual(
        result.results.map((r) => [r.index, r.status, r.error?.code ?? null]),
        [
          [0, 'rejected', 'empty_document'],
          [1, 'sent', null],
          [2, 'rejected', 'unknown_region'],
          [3, 'sent', null],
          [4, 'rejected', 'bad_input'],
          [5, 'rejected', 'document_too_large'],
          [6, 'sent', null],
        ],
      );
      assert.equal(result.results[0]!.sourceId, `text:${sha256Hex('')}`);
      assert.deepEqual([result.results[4]!.jobId, result.results[4]!.region], ['j1', 'eu']);
      assert.equal(result.results[2]!.region, 'ap');
      assert.ok(!JSON.stringify(result).includes('SECRET-OVERSIZE'));
      const usSources = (await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
      const euSources = (await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).map((m) => JobSchema.parse(JSON.parse(m.Body!)).input.sourceId);
      assert.deepEqual(usSources.sort(), ['g-us-1', 'g-us-2']);
      assert.deepEqual(euSources, ['g-eu']);
      assert.deepEqual(
        await objectKeys('us-east-1', t.bucket.us),
        [sha256Hex('good us invoice 1'), sha256Hex('good us invoice 2')].map((h) => `documents/${h}.txt`).sort(),
      );
      assert.deepEqual(await objectKeys('eu-central-1', t.bucket.eu), [`documents/${sha256Hex('good eu invoice')}.txt`]);
    });

    it('a single bad document is rejected, nothing is sent, and the call does not throw', async () => {
      // Prepare
      const t = await setupLanes();
      const deps = baseDeps(t.lanes);
      // Act
      const result = await submitDocuments({ documents: [{ text: 'x', region: 'mars', sourceId: 'lost' }] }, deps);
      // Assess
      assert.deepEqual([result.total, result.sent, result.failed, result.rejected], [1, 0, 0, 1]);
      assert.deepEqual(result.results, [
        {
          index: 0,
          sourceId: 'lost',
          jobId: '',
          region: 'mars',
          idempotencyKey: '',
          status: 'rejected',
          error: { code: 'unknown_region', message: result.results[0]!.error!.message, stage: 'validation' },
        },
      ]);
      assert.match(result.results[0]!.error!.message, /unknown region "mars"; known lanes: us, eu/);
      assert.deepEqual(deps.regionsAsked, [], 'no client was even asked for');
      assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
      assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
    });
  });

  describe('with atomic: true, rejects bad input with a typed error and sends nothing', () => {
    for (const c of badCases) {
      it(c.name, async () => {
        // Prepare
        const t = await setupLanes();
        const deps = baseDeps(t.lanes, { ...c.deps, atomic: true });
        // Act
        const error = await submitDocuments({ documents: [valid, c.doc as never] }, deps).then(
          () => assert.fail('expected a rejection'),
          (e: unknown) => e,
        );
        // Assess
        assert.ok(error instanceof SubmissionRejectedError);
        assert.equal(error.name, 'SubmissionRejectedError');
        assert.equal(error.items.length, 1);
        assert.equal(error.items[0]!.index, 1);
        assert.equal(error.items[0]!.reason, c.reason);
        assert.ok(!error.message.includes('SECRET-OVERSIZE') && !JSON.stringify(error.items).includes('SECRET-OVERSIZE'));
        assert.deepEqual(deps.regionsAsked, [], 'no client was even asked for');
        assert.equal((await drain(clientsIn('us-east-1').sqs, t.queueUrl.us)).length, 0);
        assert.deepEqual(await objectKeys('us-east-1', t.bucket.us), []);
      });
    }

    it('lists every bad item of a submission at once', async () => {
      // Prepare
      const t = await setupLanes();
      // Act
      const error = await submitDocuments(
        {
          documents: [
            { text: '', region: 'us' },
            valid,
            { text: 'x', region: 'ap' },
            { text: 'z', region: 'eu', jobId: 'j1' },
            { text: 'w', region: 'eu', jobId: 'j1' },
          ],
        },
        baseDeps(t.lanes, { atomic: true }),
      ).catch((e: unknown) => e);
      // Assess
      assert.ok(error instanceof SubmissionRejectedError);
      assert.deepEqual(
        error.items.map((i) => [i.index, i.reason]),
        [
          [0, 'empty_document'],
          [2, 'unknown_region'],
          [4, 'bad_input'],
        ],
      );
      assert.equal(error.items[0]!.sourceId, `text:${sha256Hex('')}`);
      assert.match(error.message, /^rejected 3 of 5 document\(s\), nothing was sent: #0 \(text:[a-f0-9]{64}\) empty_document/);
      assert.equal((await drain(clientsIn('eu-central-1').sqs, t.queueUrl.eu)).length, 0);
    });
  });
});
