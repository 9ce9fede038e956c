import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { type CorpusManifestEntry, loadCorpus } from '../../../workbench/corpus/index.js';
import { getRelease, knownReleases, releaseProblems } from '../../../lib/contract/releases.js';
import {
  DEFAULT_PROMPT_VERSION,
  DEFAULT_SCHEMA_VERSION,
  UnknownSchemaVersionError,
  getExtractionPrompt,
  getExtractionSchema,
  isKnownPromptVersion,
  knownSchemaVersions,
} from '../../../lib/contract/schemas/registry.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { extractReceipt } from '../../../workbench/fake-provider/extractors/receipt.js';
import { strictModeProblems } from '../../helpers/strict-schema.js';

/** The first receipt of the receipt corpus, with its text and expected object. */
function firstReceipt(): { text: string; expected: unknown } {
  const root = new URL('../../../workbench/corpus/', import.meta.url);
  const [entry] = JSON.parse(readFileSync(new URL('receipts/manifest.json', root), 'utf8')) as CorpusManifestEntry[];
  assert.ok(entry);
  return { text: readFileSync(new URL(entry.file, root), 'utf8'), expected: JSON.parse(readFileSync(new URL(entry.expected, root), 'utf8')) };
}

/** What the fake provider does: take the text between the exact markers of the user message. */
function documentBetweenMarkers(content: string): string | null {
  const start = content.indexOf('<document>\n');
  const end = content.lastIndexOf('\n</document>');
  return start < 0 || end < start ? null : content.slice(start + '<document>\n'.length, end);
}

describe('extraction schema registry', () => {
  it('resolves the default versions to the invoice schema', () => {
    // Act
    const schema = getExtractionSchema(DEFAULT_SCHEMA_VERSION);
    // Assess
    assert.equal(schema.schemaVersion, 'invoice@1');
    assert.match(schema.jsonSchemaName, /^[a-zA-Z0-9_-]{1,64}$/);
    assert.equal(schema.jsonSchema.type, 'object');
    assert.equal(isKnownPromptVersion(DEFAULT_SCHEMA_VERSION, DEFAULT_PROMPT_VERSION), true);
  });

  it('throws a typed error for an unknown schema version and knows no stray prompt versions', () => {
    // Act
    const act = () => getExtractionSchema('contract@7');
    // Assess
    assert.throws(act, (error: unknown) => {
      assert.ok(error instanceof UnknownSchemaVersionError);
      assert.equal(error.name, 'UnknownSchemaVersionError');
      assert.equal(error.schemaVersion, 'contract@7');
      return true;
    });
    assert.equal(isKnownPromptVersion('invoice@1', 'invoice-extract@9'), false);
    assert.equal(isKnownPromptVersion('invoice@1', 'receipt-extract@1'), false);
    assert.equal(isKnownPromptVersion('contract@7', 'invoice-extract@1'), false);
    assert.equal(isKnownPromptVersion('invoice@1', 'toString'), false);
    assert.equal(isKnownPromptVersion('receipt@1', 'toString'), false);
    assert.equal(getExtractionPrompt('invoice@1', 'invoice-extract@9'), undefined);
  });

  it('puts the document verbatim between the markers, so the fake provider answers it correctly', () => {
    // Prepare
    const doc = loadCorpus()[0];
    assert.ok(doc);
    const schema = getExtractionSchema(DEFAULT_SCHEMA_VERSION);
    const prompt = getExtractionPrompt(DEFAULT_SCHEMA_VERSION, DEFAULT_PROMPT_VERSION);
    assert.ok(prompt);
    // Act
    const messages = prompt.buildMessages(doc.text);
    const user = messages.find((m) => m.role === 'user');
    const text = documentBetweenMarkers(user?.content ?? '');
    const answer = extractInvoice(text ?? '');
    // Assess
    assert.equal(messages[0]?.role, 'system');
    assert.equal(text, doc.text);
    assert.ok(schema.zod.safeParse(answer).success);
    assert.deepEqual(schema.domainRules(answer), []);
    assert.deepEqual(answer, doc.expected);
  });

  it('builds one repair call that carries the document, the previous output and every problem', () => {
    // Prepare
    const prompt = getExtractionPrompt(DEFAULT_SCHEMA_VERSION, DEFAULT_PROMPT_VERSION);
    assert.ok(prompt);
    const problems = ['total: total_sum', 'issueDate: Invalid ISO date'];
    // Act
    const messages = prompt.buildRepairMessages('Invoice No.: 1\n', '{"total": 3}', problems);
    const user = messages.find((m) => m.role === 'user')?.content ?? '';
    // Assess
    assert.equal(documentBetweenMarkers(user), 'Invoice No.: 1\n');
    assert.ok(user.includes('{"total": 3}'));
    for (const problem of problems) assert.ok(user.includes(`- ${problem}`));
  });

  it('registers receipt@1 with its prompt, and every release names a registered prompt for every schema', () => {
    // Act
    const schema = getExtractionSchema('receipt@1');
    const problems = knownReleases().flatMap((id) => releaseProblems(getRelease(id)));
    // Assess
    assert.deepEqual(knownSchemaVersions().sort(), ['invoice@1', 'receipt@1']);
    assert.equal(schema.schemaVersion, 'receipt@1');
    assert.equal(schema.jsonSchemaName, 'receipt_v1');
    assert.equal(isKnownPromptVersion('receipt@1', 'receipt-extract@1'), true);
    assert.equal(isKnownPromptVersion('receipt@1', 'invoice-extract@1'), false);
    assert.deepEqual(releaseProblems(getRelease('2026.11')), []);
    assert.deepEqual(problems, []);
  });

  it('sends only JSON schemas that OpenAI structured outputs accept in strict mode', () => {
    // Act
    const problems = knownSchemaVersions().flatMap((version) => strictModeProblems(getExtractionSchema(version).jsonSchema, version));
    // Assess
    assert.deepEqual(problems, []);
    for (const version of knownSchemaVersions()) assert.match(getExtractionSchema(version).jsonSchemaName, /^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('puts a receipt verbatim between the markers, so the fake provider answers it correctly', () => {
    // Prepare
    const doc = firstReceipt();
    const schema = getExtractionSchema('receipt@1');
    const prompt = getExtractionPrompt('receipt@1', 'receipt-extract@1');
    assert.ok(prompt);
    // Act
    const messages = prompt.buildMessages(doc.text);
    const text = documentBetweenMarkers(messages.find((m) => m.role === 'user')?.content ?? '');
    const answer = extractReceipt(text ?? '');
    // Assess
    assert.equal(messages[0]?.role, 'system');
    assert.equal(text, doc.text);
    assert.ok(schema.zod.safeParse(answer).success);
    assert.deepEqual(schema.domainRules(answer), []);
    assert.deepEqual(answer, doc.expected);
  });
});
