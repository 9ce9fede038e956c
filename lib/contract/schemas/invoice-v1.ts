/**
 * Extraction schema `invoice@1`: the object a model must return for one invoice document.
 *
 * The zod schema is the source of truth; {@link invoiceV1JsonSchema} is derived from it and is shaped for
 * OpenAI structured outputs in strict mode (every property required, optional values as `null` unions,
 * `additionalProperties: false`, only keywords strict mode accepts). Arithmetic that a JSON schema cannot
 * express lives in {@link invoiceV1DomainRules}.
 */
import { z } from 'zod';
import { INVOICE_PROMPTS } from './invoice-prompts.js';
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

export type { DomainRuleViolation } from './schema-kit.js';

/** A calendar date as `YYYY-MM-DD`. */
const calendarDate = z.iso.date();

const vatId = nullableVatId.describe('VAT identification number as printed (e.g. DE123456789, GB123456789, CHE-123.456.789 MWST); null when none is printed');

/** One invoiced position. */
export const InvoiceV1LineItem = z
  .object({
    description: text.describe('The line description as printed, without quantity or prices'),
    quantity: z.number().gt(0).multipleOf(0.001),
    unitPrice: money.describe('Net unit price'),
    amount: money.describe('Net line amount: quantity x unitPrice'),
  })
  .strict();

export const InvoiceV1 = z
  .object({
    invoiceNumber: text.describe('The invoice number as printed, without its label'),
    issueDate: calendarDate.describe('Invoice (issue) date, YYYY-MM-DD; not the delivery date'),
    dueDate: calendarDate.nullable().describe('Payment due date when a date is stated, YYYY-MM-DD; null when only terms (e.g. "net 30") or nothing is stated'),
    currency: currencyCode.describe('ISO 4217 currency code, e.g. EUR, USD, GBP, CHF'),
    seller: z
      .object({
        name: text.describe('Legal name of the issuing company'),
        vatId,
        country: countryCode.describe('ISO 3166-1 alpha-2 country code of the seller address'),
      })
      .strict(),
    buyer: z
      .object({
        name: text.describe('Name of the invoiced company or person'),
        vatId,
      })
      .strict(),
    lineItems: z.array(InvoiceV1LineItem).min(1).max(100),
    subtotal: money.describe('Sum of the net line amounts'),
    taxRate: z.number().min(0).max(100).multipleOf(0.01).describe('Tax rate in percent, e.g. 19 for 19 %'),
    taxAmount: money,
    total: money.describe('Gross amount: subtotal + taxAmount'),
    purchaseOrder: text.nullable().describe("The buyer's purchase order number as printed; null when absent"),
    language: z.enum(['en', 'de', 'fr']).describe('Language the document is written in'),
  })
  .strict();

/** An extracted invoice, schema `invoice@1`. */
export type InvoiceV1 = z.infer<typeof InvoiceV1>;
/** One line item of {@link InvoiceV1}. */
export type InvoiceV1LineItem = z.infer<typeof InvoiceV1LineItem>;

/** Name under which the schema is sent as `response_format.json_schema.name` (`^[a-zA-Z0-9_-]{1,64}$`). */
export const INVOICE_V1_JSON_SCHEMA_NAME = 'invoice_v1';

/**
 * JSON schema of {@link InvoiceV1} for `response_format: { type: 'json_schema', json_schema: { name, schema, strict: true } }`.
 * The `$schema` dialect marker is dropped; everything else is `z.toJSONSchema(InvoiceV1)`.
 */
export const invoiceV1JsonSchema: Record<string, unknown> = strictJsonSchema(InvoiceV1);

/**
 * Business rules a JSON schema cannot express: line arithmetic, sums, tax, total and date order.
 * Expects an object that already passed {@link InvoiceV1}.
 * @returns every violation found; empty when the invoice is consistent
 */
export function invoiceV1DomainRules(invoice: InvoiceV1): DomainRuleViolation[] {
  const violations: DomainRuleViolation[] = [];

  invoice.lineItems.forEach((item, index) => {
    const expected = round2(item.quantity * item.unitPrice);
    if (differs(item.amount, expected)) {
      violations.push({
        field: `lineItems[${index}].amount`,
        rule: 'line_amount',
        message: `lineItems[${index}].amount ${show(item.amount)} != quantity ${item.quantity} x unitPrice ${show(item.unitPrice)} = ${show(expected)}`,
      });
    }
  });

  const sumOfAmounts = round2(invoice.lineItems.reduce((sum, item) => sum + item.amount, 0));
  if (differs(invoice.subtotal, sumOfAmounts)) {
    violations.push({
      field: 'subtotal',
      rule: 'subtotal_sum',
      message: `subtotal ${show(invoice.subtotal)} != sum of lineItems amounts ${show(sumOfAmounts)}`,
    });
  }

  const expectedTax = round2((invoice.subtotal * invoice.taxRate) / 100);
  if (differs(invoice.taxAmount, expectedTax)) {
    violations.push({
      field: 'taxAmount',
      rule: 'tax_amount',
      message: `taxAmount ${show(invoice.taxAmount)} != subtotal ${show(invoice.subtotal)} x taxRate ${invoice.taxRate}% = ${show(expectedTax)}`,
    });
  }

  const expectedTotal = round2(invoice.subtotal + invoice.taxAmount);
  if (differs(invoice.total, expectedTotal)) {
    violations.push({
      field: 'total',
      rule: 'total_sum',
      message: `total ${show(invoice.total)} != subtotal ${show(invoice.subtotal)} + taxAmount ${show(invoice.taxAmount)} = ${show(expectedTotal)}`,
    });
  }

  if (invoice.dueDate !== null && invoice.dueDate < invoice.issueDate) {
    violations.push({
      field: 'dueDate',
      rule: 'due_not_before_issue',
      message: 'dueDate is before issueDate',
    });
  }

  if (invoice.seller.vatId !== null && invoice.buyer.vatId !== null && invoice.seller.vatId === invoice.buyer.vatId) {
    violations.push({
      field: 'buyer.vatId',
      rule: 'distinct_parties',
      message: 'buyer.vatId equals seller.vatId',
    });
  }

  return violations;
}

/** The registry entry of `invoice@1`: schema, JSON schema, domain rules and prompts (see `registry.ts`). */
export const invoiceV1Entry: ExtractionSchema<InvoiceV1> = {
  schemaVersion: 'invoice@1',
  zod: InvoiceV1,
  jsonSchema: invoiceV1JsonSchema,
  jsonSchemaName: INVOICE_V1_JSON_SCHEMA_NAME,
  domainRules: invoiceV1DomainRules,
  prompts: INVOICE_PROMPTS,
};
