import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractInvoice, parseLocaleNumber } from '../../../../workbench/fake-provider/extractors/invoice.js';
import { detectDecimalMark } from '../../../../workbench/fake-provider/extractors/text.js';

const US_SELLER = ['Northwind Traders LLC', '1200 Market Street', 'Austin, TX 78701'];
const GB_SELLER = ['Thames Valley Consulting Ltd', '14 Riverside Walk', 'Reading RG1 8DB', 'United Kingdom', 'VAT ID: GB284915673'];
const DE_SELLER = ['Brandt Elektrotechnik GmbH', 'Industriestraße 12', '70565 Stuttgart', 'Germany', 'VAT ID: DE811569869'];

/** A small English invoice around the given seller block, header lines, table rows and totals. */
function englishInvoice(seller: string[], header: string[], rows: string[], totals: string[]): string {
  return [
    ...seller,
    '',
    'INVOICE',
    '',
    'Invoice No.: T-100',
    ...header,
    '',
    'Bill To:',
    'Acme Widgets Corp.',
    '400 Commerce Drive',
    '',
    'Description   Qty   Unit Price   Amount',
    ...rows,
    '',
    ...totals,
    '',
  ].join('\n');
}

const ROW = ['Widget        2        10.00    20.00'];
const TOTALS = ['Subtotal:   USD 20.00', 'Tax (0%):   USD 0.00', 'Total due:   USD 20.00'];

describe('invoice extractor: numbers', () => {
  it('reads a lone separator before three digits by the decimal mark, and groups of spaces as thousands', () => {
    // Act
    const values = [
      parseLocaleNumber('1,250', ','),
      parseLocaleNumber('1,250', '.'),
      parseLocaleNumber('1.250', ','),
      parseLocaleNumber('1.250', '.'),
      parseLocaleNumber('1 234,56', ','),
      parseLocaleNumber('1\u202f234,56', ','),
      parseLocaleNumber("1'234.50", '.'),
      parseLocaleNumber('1.234,500', '.'),
      parseLocaleNumber('22,5', '.'),
      parseLocaleNumber('1,234,567', ','),
    ];
    // Assess
    assert.deepEqual(values, [1.25, 1250, 1250, 1.25, 1234.56, 1234.56, 1234.5, 1234.5, 22.5, 1234567]);
  });

  it('takes the decimal mark from the amounts that decide it, and from the language when none does', () => {
    // Act
    const comma = detectDecimalMark('Subtotal: 1.234,56\nVAT (19%): 234,57\nDate: 04.03.2026', 'en');
    const dot = detectDecimalMark("Total exkl. MWST CHF 1'234.50\nDatum: 04.03.2026", 'de');
    const undecided = detectDecimalMark('Menge 1,250\nDatum 04.03.2026', 'de');
    // Assess
    assert.equal(comma, ',');
    assert.equal(dot, '.');
    assert.equal(undecided, ',');
  });

  it('reads an English invoice of a continental seller with decimal commas, 1,250 as 1.25', () => {
    // Prepare
    const text = englishInvoice(
      DE_SELLER,
      ['Invoice Date: 2026-03-04'],
      ['Hex bolts M6     20      1,250      25,00', 'Consulting        2   1.100,000   2.200,00'],
      ['Subtotal:   EUR 2.225,00', 'VAT (19%):   EUR 422,75', 'Total due:   EUR 2.647,75'],
    );
    // Act
    const invoice = extractInvoice(text);
    // Assess
    assert.deepEqual(
      invoice.lineItems.map((item) => [item.quantity, item.unitPrice, item.amount]),
      [
        [20, 1.25, 25],
        [2, 1100, 2200],
      ],
    );
    assert.equal(invoice.total, 2647.75);
  });
});

describe('invoice extractor: slashed dates and currency by seller country', () => {
  it('reads an unstated slashed date month first for a US seller and day first for any other', () => {
    // Prepare
    const us = englishInvoice(US_SELLER, ['Invoice Date: 03/04/2026'], ROW, TOTALS);
    const gb = englishInvoice(GB_SELLER, ['Invoice Date: 03/04/2026'], ROW, TOTALS);
    const deInUsd = englishInvoice(DE_SELLER, ['Invoice Date: 03/04/2026'], ROW, TOTALS);
    // Act
    const dates = [us, gb, deInUsd].map((text) => extractInvoice(text).issueDate);
    // Assess
    assert.deepEqual(dates, ['2026-03-04', '2026-04-03', '2026-04-03']);
  });

  it('follows a stated convention over the seller country', () => {
    // Prepare
    const text = englishInvoice(US_SELLER, ['Invoice Date (DD/MM/YYYY): 03/04/2026'], ROW, TOTALS);
    // Act
    const invoice = extractInvoice(text);
    // Assess
    assert.equal(invoice.issueDate, '2026-04-03');
  });

  it('bills in the seller country currency when the document prints none', () => {
    // Prepare
    const plain = ['Subtotal:   20.00', 'VAT (20%):   4.00', 'Total due:   24.00'];
    const texts = [GB_SELLER, US_SELLER, DE_SELLER].map((seller) => englishInvoice(seller, ['Invoice Date: 2026-03-04'], ROW, plain));
    // Act
    const currencies = texts.map((text) => extractInvoice(text).currency);
    // Assess
    assert.deepEqual(currencies, ['GBP', 'USD', 'EUR']);
  });
});

describe('invoice extractor: French and multi-page invoices', () => {
  it('reads French labels, dates such as 1er mars 2026, space-grouped amounts and Total HT / TVA / Total TTC', () => {
    // Prepare
    const text = [
      'Atelier Lumière SAS',
      '14 rue des Tanneurs',
      '69002 Lyon',
      'France',
      'SIREN 812 345 678 – N° TVA intracommunautaire : FR32812345678',
      '',
      'FACTURE N° F2026-0142',
      '',
      'Date de facture : 1er mars 2026',
      'Date de livraison : 27 février 2026',
      'Date d’échéance : 31 mars 2026',
      'Bon de commande : BC-4512',
      '',
      'Client :',
      'Marie Lefèvre',
      '18 rue Victor Hugo',
      '',
      '| Désignation | Qté | Prix unitaire HT | Montant HT |',
      '|---|---|---|---|',
      '| Prestation de conseil | 10 | 123,45 € | 1\u202f234,50 € |',
      '',
      'Total HT   1\u202f234,50 €',
      'TVA 5,5 %     67,90 €',
      'Total TTC   1\u202f302,40 €',
      '',
    ].join('\n');
    // Act
    const invoice = extractInvoice(text);
    // Assess
    assert.deepEqual(
      [invoice.language, invoice.invoiceNumber, invoice.issueDate, invoice.dueDate, invoice.purchaseOrder],
      ['fr', 'F2026-0142', '2026-03-01', '2026-03-31', 'BC-4512'],
    );
    assert.deepEqual([invoice.seller.country, invoice.seller.vatId, invoice.buyer.name], ['FR', 'FR32812345678', 'Marie Lefèvre']);
    assert.deepEqual([invoice.subtotal, invoice.taxRate, invoice.taxAmount, invoice.total, invoice.currency], [1234.5, 5.5, 67.9, 1302.4, 'EUR']);
  });

  it('collects the items of a table continued over pages, skipping carried-forward lines', () => {
    // Prepare
    const text = englishInvoice(
      GB_SELLER,
      ['Invoice Date: 4 March 2026'],
      ['Widget        2        10.00    20.00', '   Carried forward                20.00', '', 'Page 1 of 2', '\fThames Valley Consulting Ltd · continued', ''],
      [
        'Description   Qty   Unit Price   Amount',
        '   Brought forward                20.00',
        'Gadget        1         5.00     5.00',
        '',
        'Subtotal:   £25.00',
        'VAT (20%):   £5.00',
        'Total due:   £30.00',
      ],
    );
    // Act
    const invoice = extractInvoice(text);
    // Assess
    assert.deepEqual(
      invoice.lineItems.map((item) => item.description),
      ['Widget', 'Gadget'],
    );
    assert.equal(invoice.subtotal, 25);
  });
});
