/**
 * The fake model's seeded errors (workbench/fake-provider/extractors/error-model.ts, hard-shapes.ts): hard shapes
 * detected from the text, one plausible corruption per shape that touches only its field(s), draws that
 * are deterministic and coupled across prompt versions, the prompt recognised from its system message,
 * and the schema dispatcher of the fake extractors.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { invoiceExtractV1, invoiceExtractV2 } from '../../../../lib/contract/schemas/invoice-prompts.js';
import { applyModelErrors, DEFAULT_MODEL_ERROR_RATES, identifyPrompt, runFakeModel } from '../../../../workbench/fake-provider/extractors/error-model.js';
import { extractForSchema, UnknownFakeSchemaError } from '../../../../workbench/fake-provider/extractors/extractors.js';
import { detectHardShapes, type HardShapeName, type ModelErrorRates } from '../../../../workbench/fake-provider/extractors/hard-shapes.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { NO_CURRENCY_INVOICE } from '../../../helpers/sample-texts.js';

const INVOICE = {
  invoiceNumber: 'INV-7',
  issueDate: '2026-03-04',
  dueDate: '2026-04-20',
  currency: 'EUR',
  seller: { name: 'Acme GmbH', vatId: 'DE123456789', country: 'DE' },
  buyer: { name: 'Beta AG', vatId: null },
  lineItems: [
    { description: 'Widget', quantity: 2, unitPrice: 12.5, amount: 25 },
    { description: 'Gadget', quantity: 1, unitPrice: 10, amount: 10 },
  ],
  subtotal: 35,
  taxRate: 19,
  taxAmount: 6.65,
  total: 41.65,
  purchaseOrder: null,
  language: 'de',
};

/** A document with every hard shape but `longInput`. */
const HARD_TEXT = 'Rechnung INV-7\nDatum 04/03/2026\nGesamt 41,65';

/** Leaf paths (`a.b[0].c`) whose values differ between two JSON values. */
function changedPaths(before: unknown, after: unknown, path = ''): string[] {
  if (typeof before === 'object' && before !== null && typeof after === 'object' && after !== null) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((key) => {
      const child = Array.isArray(before) ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`;
      return changedPaths((before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key], child);
    });
  }
  return Object.is(before, after) ? [] : [path];
}

/** Applies one shape at rate 1 (every other shape at rate 0) to `correct`. */
function only(shape: HardShapeName, correct: unknown, documentText = HARD_TEXT) {
  const rates: ModelErrorRates = { 'test@1': { [shape]: 1 } };
  return applyModelErrors({ correct, documentText, promptVersion: 'test@1', repair: false, rates, seed: 1 });
}

describe('fake model errors: hard shapes from the text', () => {
  const cases: Array<{ shape: HardShapeName; hard: string[]; easy: string[] }> = [
    {
      shape: 'ambiguousDate',
      hard: ['Date 04/03/2026 EUR', 'due 1/12/2026 EUR'],
      easy: ['Date 25/03/2026 EUR', 'Date 04/03/2026 (DD/MM/YYYY) EUR', 'Datum 04/03/2026 TT/MM/JJJJ EUR', 'Date 2026-03-04 EUR'],
    },
    { shape: 'decimalComma', hard: ['Total 12,50 EUR', 'Summe 1.234,56 EUR', 'Total 1 234,56 €'], easy: ['Total 1,234.56 EUR', 'Qty 3, 12 items EUR'] },
    { shape: 'longInput', hard: [`EUR ${'x'.repeat(8_000)}`], easy: [`EUR ${'x'.repeat(7_996)}`] },
    {
      shape: 'noCurrencySymbol',
      hard: ['Total 12.50', 'Total 12.50 Euro'],
      easy: ['Total $12.50', 'Total 12,50 €', 'Total £3', 'CHF 5.00', 'Fr. 5.00', 'Total 12.50 EUR', 'USD 3', 'GBP 3'],
    },
  ];
  for (const { shape, hard, easy } of cases) {
    it(`detects ${shape} on a minimal text and not on its counter-examples`, () => {
      // Prepare: a correct object without nulls
      const correct = { total: 1 };
      // Act
      const onHard = hard.map((text) => detectHardShapes(text, correct).includes(shape));
      const onEasy = easy.map((text) => detectHardShapes(text, correct).includes(shape));
      // Assess
      assert.deepEqual(
        onHard,
        hard.map(() => true),
        hard.join(' | '),
      );
      assert.deepEqual(
        onEasy,
        easy.map(() => false),
        easy.join(' | '),
      );
    });
  }

  it('detects missingField from a null top-level or one-level-nested field of the correct object only', () => {
    // Prepare
    const text = 'Total 12.50 EUR';
    // Act
    const found = [{ a: null }, { party: { vatId: null } }, { a: 1, deep: { x: { y: null } } }, { a: 1, list: [{ b: null }] }].map((correct) =>
      detectHardShapes(text, correct).includes('missingField'),
    );
    // Assess
    assert.deepEqual(found, [true, true, false, false]);
  });
});

describe('fake model errors: one plausible corruption per shape', () => {
  it('ambiguousDate swaps month and day of the swappable top-level dates only', () => {
    // Act
    const { result, applied } = only('ambiguousDate', INVOICE);
    // Assess: dueDate (day 20) cannot be read the other way
    assert.deepEqual(applied, ['ambiguousDate']);
    assert.deepEqual(changedPaths(INVOICE, result), ['issueDate']);
    assert.equal((result as typeof INVOICE).issueDate, '2026-04-03');
  });

  it('decimalComma misreads the first line item unit price (×100), nothing else', () => {
    // Act
    const { result, applied } = only('decimalComma', INVOICE);
    // Assess
    assert.deepEqual(applied, ['decimalComma']);
    assert.deepEqual(changedPaths(INVOICE, result), ['lineItems[0].unitPrice']);
    assert.equal((result as typeof INVOICE).lineItems[0]?.unitPrice, 1250);
  });

  it('missingField fills exactly one null field with a plausible value', () => {
    // Prepare: a second invoice whose only null field is the due date
    const dueless = { ...INVOICE, dueDate: null, buyer: { name: 'Beta AG', vatId: 'DE987654321' }, purchaseOrder: 'PO-1' };
    // Act
    const { result, applied } = only('missingField', INVOICE);
    const dated = only('missingField', dueless);
    // Assess
    assert.deepEqual(applied, ['missingField']);
    const changed = changedPaths(INVOICE, result);
    assert.equal(changed.length, 1, changed.join(','));
    const value = changed[0] === 'purchaseOrder' ? (result as typeof INVOICE).purchaseOrder : (result as typeof INVOICE).buyer.vatId;
    if (changed[0] === 'purchaseOrder') assert.equal(value, 'INV-7-01');
    else {
      assert.equal(changed[0], 'buyer.vatId');
      assert.match(String(value), /^DE\d{9}$/);
      assert.notEqual(value, INVOICE.seller.vatId);
    }
    assert.deepEqual(changedPaths(dueless, dated.result), ['dueDate']);
    assert.equal((dated.result as typeof INVOICE).dueDate, '2026-04-03');
  });

  it('longInput drops the last line item, nothing else', () => {
    // Act
    const { result, applied } = only('longInput', INVOICE, `EUR ${'x'.repeat(9_000)}`);
    // Assess
    assert.deepEqual(applied, ['longInput']);
    assert.deepEqual((result as typeof INVOICE).lineItems, INVOICE.lineItems.slice(0, 1));
    assert.ok(changedPaths(INVOICE, result).every((path) => path.startsWith('lineItems[1]')));
  });

  it('noCurrencySymbol guesses USD, or EUR when the right currency is USD, nothing else', () => {
    // Act
    const fromEur = only('noCurrencySymbol', INVOICE);
    const fromUsd = only('noCurrencySymbol', { ...INVOICE, currency: 'USD' });
    // Assess
    assert.deepEqual(changedPaths(INVOICE, fromEur.result), ['currency']);
    assert.equal((fromEur.result as typeof INVOICE).currency, 'USD');
    assert.equal((fromUsd.result as typeof INVOICE).currency, 'EUR');
  });

  it('corrupts a receipt-shaped object by the same field names and types', () => {
    // Prepare
    const receipt = {
      merchant: { name: 'Café', vatId: 'ATU12345678', country: 'AT' },
      date: '2026-05-06',
      items: [{ amount: 3.5 }, { amount: 2 }],
      total: 5.5,
    };
    const text = `Kassa 06/05/2026 Summe 5,50 ${'.'.repeat(8_000)}`;
    // Act
    const date = only('ambiguousDate', receipt, text);
    const comma = only('decimalComma', receipt, text);
    const long = only('longInput', receipt, text);
    // Assess
    assert.deepEqual(changedPaths(receipt, date.result), ['date']);
    assert.deepEqual(changedPaths(receipt, comma.result), ['items[0].amount']);
    assert.equal((long.result as typeof receipt).items.length, 1);
  });

  it('is deterministic, never changes its input, and makes no error for an unknown or missing prompt version', () => {
    // Prepare
    const input = { correct: INVOICE, documentText: HARD_TEXT, promptVersion: 'invoice-extract@2', repair: false, rates: DEFAULT_MODEL_ERROR_RATES, seed: 3 };
    const before = structuredClone(INVOICE);
    // Act
    const first = applyModelErrors(input);
    const again = applyModelErrors(structuredClone(input));
    const unknown = applyModelErrors({ ...input, promptVersion: 'invoice-extract@9' });
    const missing = applyModelErrors({ ...input, promptVersion: undefined });
    // Assess
    assert.deepEqual(again, first);
    assert.deepEqual(INVOICE, before);
    assert.deepEqual(unknown, { result: INVOICE, applied: [] });
    assert.deepEqual(missing, { result: INVOICE, applied: [] });
  });
});

describe('fake model errors: seeded, coupled draws', () => {
  const docs = Array.from({ length: 200 }, (_, i) => `Rechnung ${i}\nDatum 04/03/2026\nGesamt 41,65\n${'y'.repeat(8_000)}`);
  const erring = (shape: HardShapeName, rate: number, repair = false): Set<number> => {
    const rates: ModelErrorRates = { 'p@1': { [shape]: rate } };
    const hits = docs.map((documentText) => applyModelErrors({ correct: INVOICE, documentText, promptVersion: 'p@1', repair, rates, seed: 7 }));
    return new Set(hits.flatMap((hit, i) => (hit.applied.length > 0 ? [i] : [])));
  };

  for (const shape of ['ambiguousDate', 'decimalComma', 'missingField', 'longInput', 'noCurrencySymbol'] as const) {
    it(`${shape}: rate 0.2 errs on a subset of the documents rate 0.8 errs on, each near its rate`, () => {
      // Act
      const low = erring(shape, 0.2);
      const high = erring(shape, 0.8);
      // Assess
      assert.ok(
        [...low].every((i) => high.has(i)),
        'subset',
      );
      assert.ok(Math.abs(low.size / docs.length - 0.2) < 0.1, `share at 0.2: ${low.size / docs.length}`);
      assert.ok(Math.abs(high.size / docs.length - 0.8) < 0.1, `share at 0.8: ${high.size / docs.length}`);
    });
  }

  it('a repair call draws again, so it may fix an error', () => {
    // Act
    const first = erring('decimalComma', 0.5);
    const repair = erring('decimalComma', 0.5, true);
    // Assess
    assert.ok(
      [...first].some((i) => !repair.has(i)),
      'some first-call errors are fixed on repair',
    );
  });

  it('invoice-extract@2 differs from invoice-extract@1 in the currency field only, with default rates', () => {
    // Act
    const answers = docs.map((documentText) =>
      (['invoice-extract@1', 'invoice-extract@2'] as const).map((promptVersion) =>
        applyModelErrors({ correct: INVOICE, documentText, promptVersion, repair: false, rates: DEFAULT_MODEL_ERROR_RATES, seed: 1 }),
      ),
    );
    // Assess
    const currencyErrors = [0, 1].map((p) => answers.filter((pair) => pair[p]?.applied.includes('noCurrencySymbol')).length);
    assert.ok(currencyErrors[1]! > currencyErrors[0]! * 3, `currency errors v1/v2: ${currencyErrors.join('/')}`);
    for (const [v1, v2] of answers) {
      assert.ok(changedPaths(v1?.result, v2?.result).every((path) => path === 'currency'));
    }
  });
});

describe('fake model: the prompt from its system message, and the extractor by schema', () => {
  it('identifies invoice-extract@1 and @2 from their real system messages and nothing else', () => {
    // Prepare
    const v1 = invoiceExtractV1.buildMessages('any document')[0]?.content;
    const v2 = invoiceExtractV2.buildRepairMessages('doc', '{}', ['x'])[0]?.content;
    // Act
    const found = [v1, v2, undefined, '', 'Extract the invoice fields as JSON.', `${v1} `].map(identifyPrompt);
    // Assess
    assert.deepEqual(found, ['invoice-extract@1', 'invoice-extract@2', undefined, undefined, undefined, undefined]);
  });

  it('without modelErrors answers exactly what the extractor answers; with them, by the request prompt', () => {
    // Prepare
    const extract = () => INVOICE;
    const systemMessage = invoiceExtractV2.buildMessages('')[0]?.content;
    const request = { documentText: HARD_TEXT, schemaName: 'invoice_v1', context: { systemMessage, repair: false } };
    // Act
    const plain = runFakeModel(extract, undefined, request);
    const erring = runFakeModel(extract, { rates: { 'invoice-extract@2': { noCurrencySymbol: 1 } } }, request);
    // Assess
    assert.equal(plain.result, INVOICE);
    assert.deepEqual(plain.applied, []);
    assert.deepEqual(erring.applied, ['noCurrencySymbol']);
  });

  it('dispatches invoice_v1 to the invoice extractor and refuses an unknown schema with a typed error', () => {
    // Prepare
    const text = NO_CURRENCY_INVOICE;
    // Act
    const invoice = extractForSchema(text, 'invoice_v1');
    const unknown = () => extractForSchema(text, 'contract_v9');
    // Assess
    assert.deepEqual(invoice, extractInvoice(text));
    assert.equal((invoice as { invoiceNumber: string }).invoiceNumber, 'RE-2026-001');
    assert.throws(unknown, (error: unknown) => error instanceof UnknownFakeSchemaError && error.schemaName === 'contract_v9');
  });
});
