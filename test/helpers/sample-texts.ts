/**
 * Small document texts the fake provider's tests extract from, shared by the unit and integration tests.
 */

/** A German invoice that prints amounts but no currency symbol or code (the extractor infers EUR from Germany). */
export const NO_CURRENCY_INVOICE = [
  'Muster GmbH',
  'Hauptstrasse 1, 10115 Berlin, Deutschland',
  'USt-IdNr.: DE123456789',
  '',
  'Rechnung',
  'Rechnungsnummer: RE-2026-001',
  'Rechnungsdatum: 04.03.2026',
  '',
  'Kunde: Beispiel AG',
  '',
  'Pos  Bezeichnung      Menge  Einzelpreis  Betrag',
  '1    Beratung         2      100.00       200.00',
  '',
  'Zwischensumme 200.00',
  'MwSt 19 % 38.00',
  'Gesamtbetrag 238.00',
].join('\n');
