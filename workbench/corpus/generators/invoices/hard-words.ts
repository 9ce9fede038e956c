/**
 * The words of the hard-shape layouts in English, German and French: labels, page furniture of long
 * documents (page marks, carried-forward lines), their terms and a generated service log that makes them
 * long. None of the prose holds a date, a currency, an amount with two decimals or a label at a line start.
 */
import { int, pick } from './draw.js';

/** The languages the hard-shape layouts write. */
export type HardLanguage = 'en' | 'de' | 'fr';

/** The labels and fixed lines of one language. */
export interface Words {
  title: string;
  number: string;
  date: string;
  due: string;
  noDue: string[];
  po: string;
  billTo: string;
  vat: string;
  table: [position: string, description: string, quantity: string, unitPrice: string, amount: string];
  subtotal: string;
  tax: (rate: string, sellerCountry: string) => string;
  total: string;
  page: (n: number, of: number) => string;
  carried: string;
  brought: string;
  continued: string;
  terms: string;
  log: string;
  variant: (n: number) => string;
}

/** The labels and page furniture of each language. */
export const WORDS: Record<HardLanguage, Words> = {
  en: {
    title: 'INVOICE',
    number: 'Invoice No.:',
    date: 'Invoice Date:',
    due: 'Due Date:',
    noDue: ['Payment terms: Net 30', 'Payment terms: due on receipt', 'Payment terms: 14 days net'],
    po: 'PO Number:',
    billTo: 'Bill To:',
    vat: 'VAT ID:',
    table: ['#', 'Description', 'Qty', 'Unit Price', 'Amount'],
    subtotal: 'Subtotal:',
    tax: (rate, country) => `${country === 'US' ? 'Sales tax' : 'VAT'} (${rate}%):`,
    total: 'Total due:',
    page: (n, of) => `Page ${n} of ${of}`,
    carried: 'Carried forward',
    brought: 'Brought forward',
    continued: 'continued',
    terms: 'General terms of business',
    log: 'Appendix: service log',
    variant: (n) => `(job ${n})`,
  },
  de: {
    title: 'RECHNUNG',
    number: 'Rechnungsnummer:',
    date: 'Rechnungsdatum:',
    due: 'Fällig am:',
    noDue: ['Zahlungsziel: 14 Tage netto', 'Zahlungsziel: sofort ohne Abzug', 'Zahlungsziel: 30 Tage netto'],
    po: 'Bestellnummer:',
    billTo: 'Rechnungsempfänger:',
    vat: 'USt-IdNr.:',
    table: ['Pos.', 'Bezeichnung', 'Menge', 'Einzelpreis', 'Gesamtpreis'],
    subtotal: 'Zwischensumme:',
    tax: (rate) => `zzgl. ${rate} % USt.:`,
    total: 'Gesamtbetrag:',
    page: (n, of) => `Seite ${n} von ${of}`,
    carried: 'Übertrag',
    brought: 'Übertrag',
    continued: 'Fortsetzung',
    terms: 'Allgemeine Geschäftsbedingungen',
    log: 'Anlage: Leistungsnachweis',
    variant: (n) => `(Auftrag ${n})`,
  },
  fr: {
    title: 'FACTURE',
    number: 'Facture n° :',
    date: 'Date de facture :',
    due: 'Date d’échéance :',
    noDue: ['Conditions de paiement : 30 jours fin de mois', 'Conditions de paiement : à réception', 'Conditions de paiement : 45 jours net'],
    po: 'Bon de commande :',
    billTo: 'Facturé à :',
    vat: 'N° TVA :',
    table: ['Réf.', 'Désignation', 'Qté', 'Prix unitaire HT', 'Montant HT'],
    subtotal: 'Total HT',
    tax: (rate) => `TVA ${rate} %`,
    total: 'Total TTC',
    page: (n, of) => `Page ${n}/${of}`,
    carried: 'À reporter',
    brought: 'Report',
    continued: 'suite',
    terms: 'Conditions générales de vente',
    log: 'Annexe : relevé des interventions',
    variant: (n) => `(lot ${n})`,
  },
};

const CLAUSES: Record<HardLanguage, string[]> = {
  en: [
    'Scope. These terms apply to every supply of goods and services by the supplier to the customer named on this invoice, unless the parties have agreed otherwise in writing and signed by both.',
    'Payment. Invoices are payable in full, without deduction or set-off, within the period stated on the first page. Where no period is stated, payment is due thirty days after the invoice was issued.',
    'Late payment. Overdue sums bear interest at eight percentage points above the reference rate of the central bank, and the supplier may suspend further deliveries until every overdue sum is paid.',
    'Title. Goods remain the property of the supplier until every sum owed under this invoice has been paid; until then the customer keeps them insured and separately stored.',
    'Acceptance. Services are deemed accepted when the customer raises no written objection within fourteen days of their completion or when the customer starts using the results in production.',
    'Warranty. The supplier remedies defects reported in writing within twelve months of delivery, at its choice by repair or replacement; further claims are excluded as far as the law permits.',
    'Liability. The liability of the supplier for slight negligence is limited to typical and foreseeable damage and in total to the fees paid under the order in the twelve months before the claim.',
    'Confidentiality. Each party keeps confidential the information it receives from the other and uses it only to perform the order, also for three years after the order ends.',
    'Data protection. Personal data is processed only to perform the order, in accordance with the applicable data protection law and the privacy notice available on request.',
    'Governing law. These terms are governed by the law of the country of the supplier; the courts at the seat of the supplier have jurisdiction for every dispute arising from the order.',
  ],
  de: [
    'Geltungsbereich. Diese Bedingungen gelten für alle Lieferungen und Leistungen an Unternehmer, auch wenn sie bei späteren Aufträgen nicht erneut ausdrücklich vereinbart werden.',
    'Preise. Die Preise verstehen sich zuzüglich der gesetzlichen Umsatzsteuer; Reisezeiten werden mit der Hälfte des vereinbarten Stundensatzes berechnet, Material nach Aufwand.',
    'Zahlung. Rechnungen sind ohne Abzug innerhalb der auf der ersten Seite genannten Frist zu begleichen; ist keine Frist genannt, innerhalb von dreißig Tagen nach Zugang der Rechnung.',
    'Verzug. Bei Zahlungsverzug berechnen wir Verzugszinsen in Höhe von neun Prozentpunkten über dem Basiszinssatz und behalten uns die Einstellung weiterer Lieferungen vor.',
    'Eigentumsvorbehalt. Gelieferte Waren bleiben bis zur vollständigen Bezahlung aller Forderungen aus der Geschäftsbeziehung unser Eigentum und sind bis dahin pfleglich zu behandeln.',
    'Abnahme. Leistungen gelten als abgenommen, wenn der Auftraggeber nicht innerhalb von vierzehn Tagen nach Fertigstellung schriftlich unter Angabe der Mängel widerspricht.',
    'Gewährleistung. Offensichtliche Mängel sind innerhalb von acht Tagen nach Lieferung schriftlich anzuzeigen; die Gewährleistungsfrist beträgt zwölf Monate ab Abnahme.',
    'Haftung. Wir haften unbeschränkt bei Vorsatz und grober Fahrlässigkeit; im Übrigen ist die Haftung auf den vertragstypischen, vorhersehbaren Schaden begrenzt.',
    'Datenschutz. Personenbezogene Daten werden ausschließlich zur Vertragsabwicklung und nach den geltenden Vorschriften des Datenschutzrechts verarbeitet.',
    'Gerichtsstand. Erfüllungsort und Gerichtsstand ist der Sitz des Auftragnehmers; es gilt das Recht des Landes, in dem der Auftragnehmer seinen Sitz hat.',
  ],
  fr: [
    'Objet. Les présentes conditions s’appliquent à toutes les ventes de biens et prestations de services du vendeur, sauf accord contraire écrit et signé par les deux parties.',
    'Prix. Les prix s’entendent hors taxes ; la taxe sur la valeur ajoutée est facturée au taux en vigueur le jour de la facturation, les frais de transport en sus.',
    'Paiement. Les factures sont payables sans escompte dans le délai indiqué en première page ; à défaut, dans les trente jours suivant la date d’émission de la facture.',
    'Retard. Tout retard de paiement entraîne de plein droit des pénalités égales à trois fois le taux d’intérêt légal ainsi qu’une indemnité forfaitaire pour frais de recouvrement.',
    'Réserve de propriété. Les marchandises restent la propriété du vendeur jusqu’au paiement intégral du prix ; les risques sont transférés à l’acheteur dès la livraison.',
    'Réception. Les prestations sont réputées acceptées faute de réserve écrite et motivée dans les quinze jours suivant leur achèvement ou leur mise en service.',
    'Garantie. Le vendeur remédie aux défauts signalés par écrit dans les douze mois suivant la livraison, par réparation ou remplacement à son choix.',
    'Responsabilité. La responsabilité du vendeur est limitée aux dommages directs et prévisibles et, au total, au montant hors taxes de la commande concernée.',
    'Données personnelles. Les données personnelles sont traitées uniquement pour l’exécution de la commande, conformément à la réglementation en vigueur.',
    'Litiges. Les présentes conditions sont soumises au droit du pays du vendeur ; tout litige relève des tribunaux du siège du vendeur.',
  ],
};

const LOG: Record<
  HardLanguage,
  { actions: string[]; sites: string[]; people: string[]; line: (n: number, action: string, site: string, who: string, hours: number) => string }
> = {
  en: {
    actions: [
      'replaced the access switch',
      'installed firmware updates',
      'checked the backup jobs',
      'moved two desks and cabling',
      'configured the new printers',
      'tested the failover link',
    ],
    sites: ['head office', 'warehouse north', 'branch office east', 'data room B', 'reception area'],
    people: ['J. Carter', 'M. Okafor', 'L. Brennan', 'S. Patel'],
    line: (n, action, site, who, hours) => `${n}. Visit ${int(1000, 9999)}: ${action} at the ${site}; technician ${who}; ${hours} hours on site.`,
  },
  de: {
    actions: [
      'Zugangsswitch getauscht',
      'Firmware-Updates eingespielt',
      'Datensicherung geprüft',
      'zwei Arbeitsplätze umgezogen',
      'neue Drucker eingerichtet',
      'Ausfallleitung getestet',
    ],
    sites: ['Hauptverwaltung', 'Lager Nord', 'Niederlassung Ost', 'Serverraum B', 'Empfang'],
    people: ['J. Keller', 'M. Yilmaz', 'L. Brandt', 'S. Wolf'],
    line: (n, action, site, who, hours) => `${n}. Einsatz ${int(1000, 9999)}: ${action}, Standort ${site}; Techniker ${who}; ${hours} Stunden vor Ort.`,
  },
  fr: {
    actions: [
      'remplacement du commutateur d’accès',
      'mise à jour des micrologiciels',
      'contrôle des sauvegardes',
      'déménagement de deux postes',
      'installation des nouvelles imprimantes',
      'essai du lien de secours',
    ],
    sites: ['siège', 'entrepôt nord', 'agence est', 'salle serveurs B', 'accueil'],
    people: ['J. Martin', 'M. Bernard', 'L. Petit', 'S. Moreau'],
    line: (n, action, site, who, hours) => `${n}. Intervention ${int(1000, 9999)} : ${action}, site ${site} ; technicien ${who} ; ${hours} heures sur place.`,
  },
};

/** Wraps a paragraph at `width` characters; continuation lines are indented by three spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    if (current.length > 0 && current.length + 1 + word.length > width) {
      lines.push(current);
      current = `   ${word}`;
    } else current = current.length > 0 ? `${current} ${word}` : word;
  }
  if (current.length > 0) lines.push(current);
  return lines;
}

/** The numbered terms of a language, every clause wrapped. */
export function termsLines(language: HardLanguage): string[] {
  return [WORDS[language].terms, '', ...CLAUSES[language].flatMap((clause, i) => wrap(`${i + 1}. ${clause}`, 100))];
}

/** A generated service log of `entries` lines (what makes the longest documents long). */
export function serviceLog(language: HardLanguage, entries: number): string[] {
  const log = LOG[language];
  const lines = [WORDS[language].log, ''];
  for (let n = 1; n <= entries; n++) lines.push(...wrap(log.line(n, pick(log.actions), pick(log.sites), pick(log.people), int(1, 9)), 100));
  return lines;
}
