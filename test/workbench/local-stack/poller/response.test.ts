/**
 * How the local event source poller reads a handler's response: AWS's ReportBatchItemFailures rules
 * (pure; the poller itself is tested against fauxqs in `test/e2e/local-stack/poller/`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { interpretBatchResponse } from '../../../../workbench/local-stack/poller/poller.js';

describe('interpretBatchResponse', () => {
  it('reads responses with AWS ReportBatchItemFailures rules', () => {
    // Prepare
    const ids = ['m1', 'm2'];
    // Act / Assess
    for (const success of [undefined, null, {}, { batchItemFailures: null }, { batchItemFailures: [] }, 'ok']) {
      assert.deepEqual(interpretBatchResponse(success, ids), { ok: true, failedIds: new Set() }, JSON.stringify(success));
    }
    assert.deepEqual(interpretBatchResponse({ batchItemFailures: [{ itemIdentifier: 'm2' }] }, ids), {
      ok: true,
      failedIds: new Set(['m2']),
    });
    for (const bad of [
      { batchItemFailures: [{ itemIdentifier: '' }] },
      { batchItemFailures: [{ itemIdentifier: null }] },
      { batchItemFailures: [{}] },
      { batchItemFailures: [{ ItemIdentifier: 'm1' }] },
      { batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm3' }] },
      { batchItemFailures: 'm1' },
      { batchItemFailures: [{ itemIdentifier: 1n }] },
    ]) {
      assert.equal(interpretBatchResponse(bad, ids).ok, false);
    }
  });
});
