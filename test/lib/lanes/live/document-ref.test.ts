/**
 * A live request's `documentRef` against a scripted S3: a missing document is `document_not_found`
 * whether S3 answers its read with 404 or, as it does for a caller whose listing permission it does
 * not apply to the key, with 403 — then only once a listing of exactly that key shows no such object.
 * A 403 for an object that exists, a listing that fails, or a key outside `documents/` stays the error it was.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { DEFAULT_LANES } from '../../../../lib/config/lanes.js';
import { readReferencedText } from '../../../../lib/lanes/live/document-ref.js';
import { documentKeyFor } from '../../../../lib/store/documents.js';

const LANE = DEFAULT_LANES.us!;
const T0 = 1_800_000_000_000;
const KEY = documentKeyFor('c'.repeat(64));
const BUDGET = { workUntil: T0 + 5_000 };

/** An S3 error as the SDK raises it: `name` from the response (a HEAD answer has no body, so none), and the HTTP status. */
function s3Error(status: number, name: string): S3ServiceException {
  return new S3ServiceException({ name, $fault: 'client', $metadata: { httpStatusCode: status }, message: name });
}

type Answer = (input: Record<string, unknown>) => unknown;

/** A scripted S3: each command's answer (a value to return, or an error to throw), and every call it got. */
function scriptedS3(script: { head?: Answer; get?: Answer; list?: Answer }) {
  const calls: Array<{ command: string; input: Record<string, unknown> }> = [];
  const s3 = {
    async send(command: { input: Record<string, unknown> }) {
      const name =
        command instanceof HeadObjectCommand
          ? 'HeadObject'
          : command instanceof GetObjectCommand
            ? 'GetObject'
            : command instanceof ListObjectsV2Command
              ? 'ListObjectsV2'
              : 'other';
      calls.push({ command: name, input: command.input });
      const answer = { HeadObject: script.head, GetObject: script.get, ListObjectsV2: script.list }[name as 'HeadObject'];
      if (!answer) throw new Error(`unscripted ${name}`);
      const result = answer(command.input);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { s3: s3 as unknown as S3Client, calls };
}

const read = (s3: S3Client, key = KEY) => readReferencedText({ s3, lane: LANE, now: () => new Date(T0) }, { key }, BUDGET);
const text = 'Invoice 7 from ACME, total 12.50 EUR';
const body = () => ({ Body: { transformToByteArray: async () => new TextEncoder().encode(text) } });

describe('documentRef: a missing document', () => {
  it('is document_not_found when S3 answers HeadObject with 403 and a listing of exactly its key finds nothing', async () => {
    // Prepare: 403 with no error name, as a HEAD answer comes
    const { s3, calls } = scriptedS3({ head: () => s3Error(403, 'Unknown'), list: () => ({ KeyCount: 0 }) });
    // Act
    const answer = await read(s3);
    // Assess
    assert.deepEqual(answer, { ok: false, refusal: { reason: 'document_not_found', detail: `no object ${KEY} in the lane's bucket` } });
    assert.deepEqual(calls, [
      { command: 'HeadObject', input: { Bucket: LANE.resources.bucketName, Key: KEY } },
      { command: 'ListObjectsV2', input: { Bucket: LANE.resources.bucketName, Prefix: KEY, MaxKeys: 1 } },
    ]);
  });

  it('is document_not_found when the listing finds only longer keys under the same prefix', async () => {
    // Prepare
    const { s3 } = scriptedS3({ head: () => s3Error(403, 'Forbidden'), list: () => ({ KeyCount: 1, Contents: [{ Key: `${KEY}.old` }] }) });
    // Act
    const answer = await read(s3);
    // Assess
    assert.equal(answer.ok ? 'ok' : answer.refusal.reason, 'document_not_found');
  });

  it('is document_not_found on a 404 without any listing', async () => {
    // Prepare
    const { s3, calls } = scriptedS3({ head: () => s3Error(404, 'NotFound') });
    // Act
    const answer = await read(s3);
    // Assess
    assert.equal(answer.ok ? 'ok' : answer.refusal.reason, 'document_not_found');
    assert.deepEqual(
      calls.map((c) => c.command),
      ['HeadObject'],
    );
  });

  it('is document_not_found when it goes between HeadObject and GetObject and GetObject answers 403', async () => {
    // Prepare
    const { s3 } = scriptedS3({ head: () => ({ ContentLength: text.length }), get: () => s3Error(403, 'AccessDenied'), list: () => ({ KeyCount: 0 }) });
    // Act
    const answer = await read(s3);
    // Assess
    assert.equal(answer.ok ? 'ok' : answer.refusal.reason, 'document_not_found');
  });
});

describe('documentRef: a 403 that is not a missing document', () => {
  it('stays the error when the listing shows the object exists (a forbidden read, not a missing one)', async () => {
    // Prepare
    const forbidden = s3Error(403, 'Unknown');
    const { s3 } = scriptedS3({ head: () => forbidden, list: () => ({ KeyCount: 1, Contents: [{ Key: KEY }] }) });
    // Act / Assess
    await assert.rejects(read(s3), (error) => error === forbidden);
  });

  it('stays the error when the listing itself is refused or fails', async () => {
    // Prepare
    const forbidden = s3Error(403, 'Unknown');
    const { s3 } = scriptedS3({ head: () => forbidden, list: () => s3Error(403, 'AccessDenied') });
    // Act / Assess
    await assert.rejects(read(s3), (error) => error === forbidden);
  });

  it('stays the error for a key outside documents/, without a listing', async () => {
    // Prepare
    const forbidden = s3Error(403, 'Unknown');
    const { s3, calls } = scriptedS3({ head: () => forbidden });
    // Act / Assess
    await assert.rejects(read(s3, 'batch/b1/input/0.jsonl'), (error) => error === forbidden);
    assert.deepEqual(
      calls.map((c) => c.command),
      ['HeadObject'],
    );
  });
});

describe('documentRef: a stored document', () => {
  it('is read as text', async () => {
    // Prepare
    const { s3 } = scriptedS3({ head: () => ({ ContentLength: text.length }), get: body });
    // Act
    const answer = await read(s3);
    // Assess
    assert.deepEqual(answer, { ok: true, text });
  });
});
