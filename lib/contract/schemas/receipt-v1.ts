/**
 * Extraction schema `receipt@1`: the object a model must return for one till, restaurant, taxi or fuel
 * receipt.
 *
 * The zod schema is the source of truth; {@link receiptV1JsonSchema} is derived from it and is shaped for
 * OpenAI structured outputs in strict mode (every property required, optional values as `null` unions,
 * `additionalProperties: false`, only keywords strict mode accepts). Arithmetic that a JSON schema cannot
 * express lives in {@link receiptV1DomainRules}:
 *
 * - `subtotal`, when printed, is the sum of the item amounts;
 * - `total = sum(items.amount) + (addedTax ?? 0) + (tip ?? 0)`: item amounts are what the customer pays
 *   per line; a sales tax added on top (`addedTax`, US style) and a tip raise the total, a VAT already
 *   contained in the prices (`includedTax`, European style) does not;
 * - a receipt either adds its tax or includes it, never both, and an included tax is less than the items.
 */
import { z } from 'zod';
import { RECEIPT_PROMPTS } from './receipt-prompts.js';
import {
  countryCode,
  currencyCode,
  type DomainRuleViolation,
  differs,
  type ExtractionSchema,
  money,
  nullableVatId,
  round2,
  show,
  strictJsonSchema,
  text,
} from './schema-kit.js';

/** One purchased position. */
export const ReceiptV1Item = z
  .object({
    description: text.describe('The item description as printed, without quantity, unit price, unit or tax code'),
    quantity: z.number().gt(0).multipleOf(0.001).describe('Quantity as printed (pieces, kg, litres); 1 when none is printed'),
    amount: money.describe('Line amount the customer pays for this position, as printed (quantity x unit price)'),
  })
  .strict();

export const ReceiptV1 = z
  .object({
    merchant: z
      .object({
        name: text.describe('Name of the shop, restaurant or taxi company as printed at the top'),
        vatId: nullableVatId.describe('VAT identification number as printed (e.g. DE123456789, ATU12345678, CHE-123.456.789 MWST); null when none is printed'),
        country: countryCode.describe('ISO 3166-1 alpha-2 country code of the merchant address'),
      })
      .strict(),
    receiptNumber: text.nullable().describe('Receipt, ticket, bill or transaction number as printed, without its label; null when absent'),
    date: z.iso.date().describe('Date of the purchase, YYYY-MM-DD'),
    time: z
      .string()
      .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/)
      .nullable()
      .describe('Time of the purchase printed with the date, 24-hour HH:MM (seconds dropped); null when none is printed'),
    currency: currencyCode.describe('ISO 4217 currency code, e.g. USD, GBP, EUR, CHF; the merchant country currency when none is printed'),
    items: z.array(ReceiptV1Item).min(1).max(100),
    subtotal: money.nullable().describe('Printed sum of the item amounts before added tax and tip; null when not printed'),
    addedTax: money.nullable().describe('Sales tax added on top of the items (US style); null when the tax is included or not printed'),
    includedTax: money
      .nullable()
      .describe('VAT contained in the item prices, summed over all rates (European style); null when the tax is added or not printed'),
    tip: money.nullable().describe('Tip or gratuity paid; null when none is printed'),
    total: money.describe('Amount paid: items + addedTax + tip'),
    paymentMethod: z.enum(['cash', 'card', 'other']).nullable().describe('cash, card (any bank or credit card), other (voucher, app); null when not printed'),
    language: z.enum(['en', 'de', 'fr']).describe('Language the receipt is written in'),
  })
  .strict();

/** An extracted receipt, schema `receipt@1`. */
export type ReceiptV1 = z.infer<typeof ReceiptV1>;
/** One item of {@link ReceiptV1}. */
export type ReceiptV1Item = z.infer<typeof ReceiptV1Item>;

/** Name under which the schema is sent as `response_format.json_schema.name` (`^[a-zA-Z0-9_-]{1,64}$`). */
export const RECEIPT_V1_JSON_SCHEMA_NAME = 'receipt_v1';

/**
 * JSON schema of {@link ReceiptV1} for `response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } }`.
 * The `$schema` dialect marker is dropped; everything else is `z.toJSONSchema(ReceiptV1)`.
 */
export const receiptV1JsonSchema: Record<string, unknown> = strictJsonSchema(ReceiptV1);

/**
 * Business rules a JSON schema cannot express: the subtotal, the total, and how the tax is counted.
 * Expects an object that already passed {@link ReceiptV1}.
 * @returns every violation found; empty when the receipt is consistent
 */
export function receiptV1DomainRules(receipt: ReceiptV1): DomainRuleViolation[] {
  const violations: DomainRuleViolation[] = [];
  const itemsSum = round2(receipt.items.reduce((sum, item) => sum + item.amount, 0));

  if (receipt.subtotal !== null && differs(receipt.subtotal, itemsSum)) {
    violations.push({
      field: 'subtotal',
      rule: 'subtotal_sum',
      message: `subtotal ${show(receipt.subtotal)} != sum of items amounts ${show(itemsSum)}`,
    });
  }

  const expectedTotal = round2(itemsSum + (receipt.addedTax ?? 0) + (receipt.tip ?? 0));
  if (differs(receipt.total, expectedTotal)) {
    violations.push({
      field: 'total',
      rule: 'total_sum',
      message: `total ${show(receipt.total)} != items ${show(itemsSum)} + addedTax ${show(receipt.addedTax ?? 0)} + tip ${show(receipt.tip ?? 0)} = ${show(expectedTotal)}`,
    });
  }

  if (receipt.addedTax !== null && receipt.includedTax !== null) {
    violations.push({
      field: 'includedTax',
      rule: 'tax_added_or_included',
      message: 'addedTax and includedTax are both set; a receipt either adds its tax or includes it',
    });
  }

  if (receipt.includedTax !== null && receipt.includedTax >= itemsSum && itemsSum > 0) {
    violations.push({
      field: 'includedTax',
      rule: 'included_tax_below_items',
      message: `includedTax ${show(receipt.includedTax)} is not below the items ${show(itemsSum)}`,
    });
  }

  return violations;
}

/** The registry entry of `receipt@1`: schema, JSON schema, domain rules and prompts (see `registry.ts`). */
export const receiptV1Entry: ExtractionSchema<ReceiptV1> = {
  schemaVersion: 'receipt@1',
  zod: ReceiptV1,
  jsonSchema: receiptV1JsonSchema,
  jsonSchemaName: RECEIPT_V1_JSON_SCHEMA_NAME,
  domainRules: receiptV1DomainRules,
  prompts: RECEIPT_PROMPTS,
};
