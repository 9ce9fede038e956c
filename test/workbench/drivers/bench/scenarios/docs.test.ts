/**
 * The `uneven-tokens` job set (workbench/drivers/bench/scenarios/docs.ts): deterministic, one job in
 * ten 5–10× longer with the fake model's answer unchanged, and what each job costs the fake
 * provider's tokens-per-minute budget, checked against the provider itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCorpus } from '../../../../../workbench/corpus/index.js';
import { getExtractionPrompt, getExtractionSchema } from '../../../../../lib/contract/schemas/registry.js';
import { LONG_EVERY, providerTokensOf, unevenDocuments } from '../../../../../workbench/drivers/bench/scenarios/docs.js';
import { corpusDocuments } from '../../../../../workbench/drivers/lanes.js';
import { extractForSchema } from '../../../../../workbench/fake-provider/extractors/extractors.js';
import { startFakeProvider } from '../../../../../workbench/fake-provider/index.js';
import { createOpenAiCompatibleAdapter } from '../../../../../lib/providers/openai-compatible.js';

const answerOf = (text: string, schemaVersion: string): unknown => extractForSchema(text, getExtractionSchema(schemaVersion).jsonSchemaName);

describe('uneven-tokens: the job set', () => {
  it('is the same on every call', () => {
    // Act
    const a = unevenDocuments(120);
    const b = unevenDocuments(120);
    // Assess
    assert.deepEqual(a, b);
  });

  it('lengthens one job in ten 5-10 times; the others are the corpus jobs, lane for lane', () => {
    // Prepare
    const plain = corpusDocuments(300);
    // Act
    const docs = unevenDocuments(300);
    // Assess
    assert.equal(docs.length, 300);
    const long = docs.filter((d) => d.lengthFactor > 1);
    assert.equal(long.length, 300 / LONG_EVERY);
    for (const [i, doc] of docs.entries()) {
      assert.equal(doc.region, plain[i]!.region, `job ${i} stays in its lane`);
      if (doc.lengthFactor === 1) {
        assert.deepEqual({ ...doc, lengthFactor: undefined }, { ...plain[i], lengthFactor: undefined });
        continue;
      }
      assert.ok(doc.lengthFactor >= 5 && doc.lengthFactor <= 10, `job ${i} is ${doc.lengthFactor}x`);
      assert.match(doc.sourceId ?? '', new RegExp(`#long${i}$`));
    }
    const sourceIds = new Set(docs.map((d) => d.sourceId));
    assert.equal(sourceIds.size, 300, 'every job has its own source id');
  });

  it('keeps the expected object: the fake model answers a long document as its original', () => {
    // Prepare
    const byId = new Map(loadCorpus().map((d) => [d.sourceId, d.text]));
    // Act
    const long = unevenDocuments(300).filter((d) => d.lengthFactor > 1);
    // Assess
    for (const doc of long) {
      const original = byId.get((doc.sourceId ?? '').replace(/#long\d+$/u, ''));
      assert.ok(original !== undefined, `${doc.sourceId} comes from a corpus document`);
      assert.equal(Math.round((doc.text.length / original.length) * 1e9), Math.round(doc.lengthFactor * 1e9));
      assert.deepEqual(answerOf(doc.text, doc.schemaVersion!), answerOf(original, doc.schemaVersion!));
      assert.ok(doc.text.startsWith(original.trimEnd()), `${doc.sourceId} begins with its original`);
    }
  });
});

describe('uneven-tokens: tokens per job', () => {
  it('is what the fake provider charges for one successful call of the consumer; a long job, its added text', async () => {
    // Prepare: a provider without limits, and two jobs (a plain one and a long one)
    const provider = await startFakeProvider({ keys: [{ key: 'k' }], extract: (text, schemaName) => extractForSchema(text, schemaName), latencyMs: 1 });
    const docs = unevenDocuments(20);
    const plain = docs[0]!;
    const long = docs.find((d) => d.lengthFactor > 1)!;
    const adapter = createOpenAiCompatibleAdapter({ model: 'gpt-4o-mini', baseUrl: provider.baseUrl, timeoutMs: 5000 });
    try {
      for (const doc of [plain, long]) {
        const schema = getExtractionSchema(doc.schemaVersion!);
        const prompt = getExtractionPrompt(doc.schemaVersion!, doc.promptVersion!)!;
        const before = provider.stats();
        // Act
        await adapter.extract({ messages: prompt.buildMessages(doc.text), jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, apiKey: 'k' });
        // Assess
        const after = provider.stats();
        assert.equal(after.tokensIn + after.tokensOut - before.tokensIn - before.tokensOut, providerTokensOf(doc), doc.sourceId);
      }
      // The long job costs its original's tokens plus a quarter token per added character.
      const original = loadCorpus().find((d) => d.sourceId === long.sourceId?.replace(/#long\d+$/u, ''))!.text;
      const added = providerTokensOf(long) - providerTokensOf({ ...long, text: original });
      assert.ok(Math.abs(added - (long.text.length - original.length) / 4) <= 2, `${added} tokens added`);
    } finally {
      await provider.stop();
    }
  });
});
