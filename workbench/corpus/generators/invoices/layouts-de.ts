/**
 * The German layouts of the corpus (Germany, Austria, Switzerland): each draws an invoice and renders
 * it as one kind of real-world German invoice text.
 */
import { BUYERS_AT, BUYERS_CH, BUYERS_DE, BUYERS_EU, countryLine, ITEMS_DE, type Party, SELLERS } from './catalogue.js';
import { addDays, formatDate, formatNumber, formatQuantity } from '../format.js';
import { columns, formatMoney, formatRate, pipeTable, swissPositionTable, totalsBlock } from './format.js';
import { drawInvoice, poNumber, type Rendered, sequence, chance, int, maybe, pick } from './draw.js';

/** de-din: DIN-5008-style letter: sender line, recipient with info block beside it, greeting, table, footer with tax IDs. */
export function renderDeDin(): Rendered {
  const seller = pick(SELLERS.DE);
  const foreign = chance(0.25);
  const buyer = foreign ? pick([...BUYERS_EU, BUYERS_AT[0] as Party]) : pick(BUYERS_DE);
  const taxRate = foreign ? 0 : pick([19, 19, 7]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: pick([`RE-${2025 + int(0, 1)}-${String(sequence()).padStart(4, '0')}`, `${2025 + int(0, 1)}${String(int(1, 999)).padStart(3, '0')}`]),
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.6) ? pick([14, 30]) : null,
  });
  const dateStyle = pick(['de-dot', 'de-long', 'de-dot-short'] as const);
  const city = (seller.address[1] ?? '').replace(/^\d+\s+/, '');
  const out: string[] = [`${seller.name} · ${seller.address.join(' · ')}`, ''];
  const left = [buyer.name];
  if (chance(0.3)) left.push(pick(['z. Hd. Frau Keller', 'Buchhaltung', 'z. Hd. Herrn Yilmaz']));
  left.push(...buyer.address);
  if (buyer.country !== 'DE') left.push(countryLine(buyer, 'de').toUpperCase());
  const placeDateLine = chance(0.4);
  const right: string[] = [`${pick(['Rechnungsnummer:', 'Rechnungs-Nr.:', 'Re.-Nr.:'])} ${invoice.invoiceNumber}`];
  if (!placeDateLine) right.push(`${pick(['Rechnungsdatum:', 'Datum:'])} ${formatDate(invoice.issueDate, dateStyle)}`);
  right.push(`Kundennummer: ${int(10000, 99999)}`);
  right.push(`${pick(['Lieferdatum:', 'Leistungsdatum:'])} ${formatDate(addDays(invoice.issueDate, -int(1, 10)), dateStyle)}`);
  if (invoice.purchaseOrder) right.push(`${pick(['Ihre Bestellung:', 'Bestellnummer:', 'Ihre Bestell-Nr.:'])} ${invoice.purchaseOrder}`);
  if (buyer.vatId) right.push(`Ihre USt-IdNr.: ${buyer.vatId}`);
  const leftWidth = Math.max(...left.map((l) => l.length)) + 6;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    out.push(`${(left[i] ?? '').padEnd(leftWidth)}${right[i] ?? ''}`.trimEnd());
  }
  out.push('');
  if (placeDateLine) out.push(`${' '.repeat(leftWidth)}${city}, ${formatDate(invoice.issueDate, dateStyle)}`, '');
  out.push(
    pick(['Rechnung', 'RECHNUNG']),
    '',
    'Sehr geehrte Damen und Herren,',
    '',
    pick(['wir erlauben uns, Ihnen folgende Leistungen in Rechnung zu stellen:', 'vielen Dank für Ihren Auftrag. Wir berechnen Ihnen:']),
    '',
  );
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'symbol-after');
  const rows = [
    ['Pos.', 'Bezeichnung', 'Menge', 'Einzelpreis', 'Gesamtpreis'],
    ...invoice.lineItems.map((l, i) => [String(i + 1), l.description, formatQuantity(l.quantity, 'de'), money(l.unitPrice), money(l.amount)]),
  ];
  const table = columns(rows, [false, false, true, true, true]);
  const width = Math.max(...table.map((l) => l.length));
  out.push(table[0] ?? '', '─'.repeat(width), ...table.slice(1), '─'.repeat(width));
  const taxLabel =
    taxRate === 0 ? 'USt. 0 % (Reverse Charge):' : `${pick(['zzgl. ', ''])}${formatRate(taxRate, 'de')} % ${pick(['USt.', 'MwSt.', 'Umsatzsteuer'])}:`;
  out.push(
    ...totalsBlock(
      [
        [pick(['Zwischensumme:', 'Summe netto:', 'Nettobetrag:']), money(invoice.subtotal)],
        [taxLabel, money(invoice.taxAmount)],
        [pick(['Gesamtbetrag:', 'Rechnungsbetrag:', 'Summe brutto:']), money(invoice.total)],
      ],
      Math.max(0, width - 38),
    ),
  );
  out.push('');
  if (taxRate === 0) out.push('Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge) gemäß § 13b UStG.');
  if (invoice.dueDate) out.push(`${pick(['Zahlbar bis zum', 'Zahlbar bis'])} ${formatDate(invoice.dueDate, dateStyle)} ohne Abzug.`);
  else out.push(pick(['Bitte überweisen Sie den Betrag innerhalb von 14 Tagen ohne Abzug.', 'Der Betrag ist sofort nach Erhalt der Rechnung fällig.']));
  out.push('', 'Mit freundlichen Grüßen', '', seller.name, '', '─'.repeat(Math.min(width, 60)));
  out.push(`${seller.name} | Sitz: ${city} | HRB ${int(10000, 99999)} | Geschäftsführung: ${pick(['Max Müller', 'Petra Brandt', 'Jonas Wolf'])}`);
  out.push(`USt-IdNr.: ${seller.vatId ?? ''} | Steuernummer: ${int(100, 999)}/${int(100, 999)}/${int(10000, 99999)}`);
  out.push(
    `Bankverbindung: ${pick(['Stadtsparkasse', 'Volksbank', 'Commerzbank'])} | IBAN: DE${int(10, 99)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(10, 99)} | BIC: ${pick(['SSKMDEMMXXX', 'GENODEF1S04', 'COBADEFFXXX'])}`,
  );
  return { invoice, text: `${out.join('\n')}\n` };
}

/** de-labelled: "Rechnung Nr." title, labelled party blocks, two-line position blocks. */
export function renderDeLabelled(): Rendered {
  const austrian = chance(0.5);
  const seller = austrian ? pick(SELLERS.AT) : pick(SELLERS.DE);
  const buyer = austrian ? pick([...BUYERS_AT, ...BUYERS_AT, BUYERS_DE[0] as Party]) : pick(BUYERS_DE);
  const crossBorder = buyer.country !== seller.country;
  const taxRate = crossBorder ? 0 : austrian ? 20 : pick([19, 7]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `${2025 + int(0, 1)}/${int(100, 999)}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.6) ? pick([8, 14, 30]) : null,
    maxItems: 6,
  });
  const dateStyle = pick(['de-long', 'de-dot', 'iso'] as const);
  const out: string[] = [`Rechnung Nr. ${invoice.invoiceNumber}`, ''];
  out.push(pick(['Rechnungssteller:', 'Leistungserbringer:']), seller.name, ...seller.address, countryLine(seller, 'de'));
  out.push(`${austrian ? 'UID' : 'USt-IdNr.'}: ${seller.vatId ?? ''}`, '');
  out.push(pick(['Rechnungsempfänger:', 'Kunde:']), buyer.name, ...buyer.address, countryLine(buyer, 'de'));
  if (buyer.vatId) out.push(`${buyer.country === 'AT' ? 'UID' : 'USt-IdNr.'}: ${buyer.vatId}`);
  out.push('');
  out.push(`${pick(['Datum:', 'Rechnungsdatum:', 'Ausstellungsdatum:'])} ${formatDate(invoice.issueDate, dateStyle)}`);
  if (chance(0.6)) {
    const start = addDays(invoice.issueDate, -int(20, 40));
    out.push(`Leistungszeitraum: ${formatDate(start, 'de-dot')} – ${formatDate(addDays(start, 14), 'de-dot')}`);
  }
  if (invoice.dueDate) out.push(`${pick(['Fällig am:', 'Zahlbar bis:', 'Fälligkeitsdatum:'])} ${formatDate(invoice.dueDate, dateStyle)}`);
  else out.push(`Zahlungsziel: ${pick(['14 Tage netto', 'sofort ohne Abzug', '30 Tage netto'])}`);
  if (invoice.purchaseOrder) out.push(`${pick(['Bestellnummer:', 'Bestell-Nr.:'])} ${invoice.purchaseOrder}`);
  out.push('');
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'code-after');
  invoice.lineItems.forEach((l, i) => {
    out.push(`Pos. ${i + 1}  ${l.description}`);
    out.push(`        Menge: ${formatQuantity(l.quantity, 'de')}  Einzelpreis: ${money(l.unitPrice)}  Betrag: ${money(l.amount)}`);
  });
  out.push('');
  out.push(`${pick(['Nettobetrag:', 'Summe netto:'])} ${money(invoice.subtotal)}`);
  out.push(`${pick(['USt.', 'MwSt.', 'Umsatzsteuer'])} ${formatRate(taxRate, 'de')} %${crossBorder ? ' (Reverse Charge)' : ''}: ${money(invoice.taxAmount)}`);
  out.push(`${pick(['Rechnungsbetrag:', 'Bruttobetrag:', 'Zu zahlen:'])} ${money(invoice.total)}`);
  out.push('');
  if (crossBorder) out.push('Die Steuerschuld geht auf den Leistungsempfänger über.');
  out.push(pick(['Vielen Dank für Ihr Vertrauen.', 'Wir danken für Ihren Auftrag.', 'Bei Rückfragen stehen wir gerne zur Verfügung.']));
  return { invoice, text: `${out.join('\n')}\n` };
}

/** de-ch: Swiss invoice in CHF with apostrophe thousands, MWST, pipe table and a QR-bill receipt section. */
export function renderDeSwiss(): Rendered {
  const seller = pick(SELLERS.CH);
  const buyer = pick(BUYERS_CH);
  const taxRate = pick([8.1, 8.1, 2.6]);
  const { invoice } = drawInvoice({
    seller,
    buyer,
    currency: 'CHF',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `R-${26 - int(0, 1)}-${String(int(1, 9999)).padStart(4, '0')}`,
    purchaseOrder: maybe(0.4, poNumber),
    dueInDays: chance(0.5) ? 30 : null,
  });
  const out: string[] = [seller.name, ...seller.address, countryLine(seller, 'de'), `${pick(['MWST-Nr.', 'UID'])}: ${seller.vatId ?? ''}`, ''];
  out.push('Rechnung', '');
  out.push(pick(['Kunde:', 'Rechnungsadresse:']), buyer.name, ...buyer.address);
  if (buyer.vatId) out.push(`UID: ${buyer.vatId}`);
  out.push('');
  const grid: string[][] = [
    ['Rechnungs-Nr.:', invoice.invoiceNumber],
    ['Datum:', formatDate(invoice.issueDate, 'de-dot')],
  ];
  if (invoice.dueDate) grid.push(['Zahlbar bis:', formatDate(invoice.dueDate, 'de-dot')]);
  if (invoice.purchaseOrder) grid.push(['Ihre Bestell-Nr.:', invoice.purchaseOrder]);
  out.push(...columns(grid, [false, false], 3), '');
  out.push(...swissPositionTable(['Pos', 'Artikel', 'Anzahl', 'Preis CHF', 'Betrag CHF'], invoice.lineItems), '');
  const money = (value: number) => formatMoney(value, 'CHF', 'ch', 'code-before');
  out.push(
    ...totalsBlock(
      [
        ['Total exkl. MWST', money(invoice.subtotal)],
        [`MWST ${formatRate(taxRate, 'ch')} %`, money(invoice.taxAmount)],
        ['Total inkl. MWST', money(invoice.total)],
      ],
      0,
    ),
  );
  out.push('');
  if (!invoice.dueDate) out.push('Zahlbar innert 30 Tagen netto.');
  out.push('Besten Dank für Ihren Auftrag.', '');
  out.push('- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -', 'Empfangsschein', 'Konto / Zahlbar an');
  out.push(`CH${int(10, 99)} 3000 ${int(1000, 9999)} ${int(1000, 9999)} ${int(1000, 9999)} ${int(1, 9)}`, seller.name, ...seller.address);
  out.push('Referenz', `${int(10, 99)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)} ${int(10000, 99999)}`);
  out.push('Zahlbar durch', buyer.name, ...buyer.address, '', 'Währung   Betrag', `CHF       ${formatNumber(invoice.total, 2, 'ch')}`, '', 'Annahmestelle');
  return { invoice, text: `${out.join('\n')}\n` };
}

const AGB = [
  'Allgemeine Geschäftsbedingungen (Auszug)',
  '',
  '§ 1 Geltungsbereich',
  'Diese Bedingungen gelten für alle Lieferungen und Leistungen gegenüber Unternehmern im Sinne',
  'des § 14 BGB. Abweichende Bedingungen des Auftraggebers werden nicht Vertragsbestandteil, auch',
  'wenn wir ihnen nicht ausdrücklich widersprechen.',
  '§ 2 Preise',
  'Alle Preise verstehen sich in Euro zuzüglich der gesetzlichen Umsatzsteuer, sofern nicht anders',
  'angegeben. Reisezeiten werden mit 50 % des vereinbarten Stundensatzes berechnet.',
  '§ 3 Zahlungsbedingungen',
  'Rechnungen sind ohne Abzug zahlbar. Bei Zahlungsverzug berechnen wir Verzugszinsen in Höhe von',
  '9 Prozentpunkten über dem Basiszinssatz sowie eine Pauschale von 40,00 EUR nach § 288 Abs. 5 BGB.',
  '§ 4 Eigentumsvorbehalt',
  'Gelieferte Waren bleiben bis zur vollständigen Bezahlung aller Forderungen aus der',
  'Geschäftsbeziehung unser Eigentum.',
  '§ 5 Gewährleistung',
  'Offensichtliche Mängel sind innerhalb von 8 Tagen nach Lieferung schriftlich anzuzeigen. Die',
  'Gewährleistungsfrist beträgt 12 Monate ab Abnahme.',
  '§ 6 Haftung',
  'Wir haften unbeschränkt bei Vorsatz und grober Fahrlässigkeit. Im Übrigen ist die Haftung auf',
  'den vertragstypischen, vorhersehbaren Schaden begrenzt.',
  '§ 7 Datenschutz',
  'Personenbezogene Daten werden ausschließlich zur Vertragsabwicklung gemäß DSGVO verarbeitet.',
  '§ 8 Gerichtsstand',
  'Erfüllungsort und Gerichtsstand ist der Sitz des Auftragnehmers. Es gilt deutsches Recht unter',
  'Ausschluss des UN-Kaufrechts.',
];

/** de-agb: one-line letterhead, "RECHNUNG Nr." title, unit column in a pipe table, long terms (AGB). */
export function renderDeAgb(): Rendered {
  const seller = chance(0.7) ? pick(SELLERS.DE) : pick(SELLERS.AT);
  const domestic = seller.country === 'AT' ? BUYERS_AT : BUYERS_DE;
  const buyer = chance(0.7) ? pick(domestic) : pick([...BUYERS_EU, ...BUYERS_AT, ...BUYERS_DE]);
  const crossBorder = buyer.country !== seller.country;
  if (crossBorder && buyer.vatId === null) return renderDeAgb();
  const taxRate = crossBorder ? 0 : seller.country === 'AT' ? 20 : 19;
  const { invoice, lines } = drawInvoice({
    seller,
    buyer,
    currency: 'EUR',
    taxRate,
    language: 'de',
    catalogue: ITEMS_DE,
    invoiceNumber: `${pick(['RE', 'AR', 'RG'])}${int(100000, 999999)}`,
    purchaseOrder: maybe(0.5, poNumber),
    dueInDays: chance(0.5) ? pick([10, 14, 21]) : null,
  });
  const dateStyle = pick(['iso', 'de-dot-short', 'de-dot'] as const);
  const out: string[] = [seller.name, `${seller.address.join(', ')}, ${countryLine(seller, 'de')}`];
  out.push(
    `Tel. +${seller.country === 'AT' ? 43 : 49} ${int(30, 89)} ${int(100000, 9999999)} | buchhaltung@${seller.name
      .split(' ')[0]
      ?.toLowerCase()
      .replace(/[^a-z]/g, '')}.example`,
  );
  out.push(`USt-IdNr. ${seller.vatId ?? ''}`, '');
  out.push(`RECHNUNG Nr. ${invoice.invoiceNumber}`, '');
  out.push(`Rechnungsdatum: ${formatDate(invoice.issueDate, dateStyle)}`);
  if (invoice.dueDate) out.push(`Fälligkeit: ${formatDate(invoice.dueDate, dateStyle)}`);
  if (invoice.purchaseOrder) out.push(`Bestell-Nr.: ${invoice.purchaseOrder}`);
  out.push(`Lieferschein-Nr.: LS-${int(10000, 99999)}`, '');
  out.push('Auftraggeber:', buyer.name, ...buyer.address, countryLine(buyer, 'de'));
  if (buyer.vatId) out.push(`USt-IdNr.: ${buyer.vatId}`);
  out.push('');
  const money = (value: number) => formatMoney(value, 'EUR', 'de', 'symbol-after');
  const rows = [
    ['Menge', 'Einheit', 'Beschreibung', 'Einzelpreis', 'Summe'],
    ...invoice.lineItems.map((l, i) => [formatQuantity(l.quantity, 'de'), lines[i]?.item.unit ?? 'Stk.', l.description, money(l.unitPrice), money(l.amount)]),
  ];
  out.push(...pipeTable(rows, [true, false, false, true, true], false), '');
  out.push(
    ...totalsBlock(
      [
        ['Summe netto', money(invoice.subtotal)],
        [`USt. ${formatRate(taxRate, 'de')} %${crossBorder ? ' (Reverse Charge)' : ''}`, money(invoice.taxAmount)],
        ['Summe brutto', money(invoice.total)],
      ],
      20,
    ),
  );
  out.push('');
  if (crossBorder) out.push('Hinweis: Steuerschuldnerschaft des Leistungsempfängers (Reverse Charge).');
  if (!invoice.dueDate) out.push('Zahlungsbedingungen: 14 Tage netto ab Rechnungsdatum.');
  out.push('Bitte geben Sie bei Zahlung die Rechnungsnummer als Verwendungszweck an.', '');
  out.push(...AGB);
  return { invoice, text: `${out.join('\n')}\n` };
}
