/**
 * The invoice generators' parties and catalogues (all fictitious): sellers and buyers per country, and
 * the line items each language's invoices draw from; for the evaluation corpus, French-speaking sellers
 * and buyers in France, Belgium and Switzerland, continental sellers that write English, French line
 * items, and a few cheap items whose unit prices print as `1,250`-like numbers.
 */

export type Country = 'US' | 'GB' | 'IE' | 'DE' | 'AT' | 'CH' | 'NL' | 'FR' | 'BE';

export interface Party {
  name: string;
  /** Street and city lines, without the country. */
  address: string[];
  country: Country;
  vatId: string | null;
  /** Country line is optional for domestic US addresses (the state and ZIP give it away). */
  usDomestic?: boolean;
}

const COUNTRY_NAMES: Record<Country, { en: string; de: string }> = {
  US: { en: 'United States', de: 'USA' },
  GB: { en: 'United Kingdom', de: 'Vereinigtes Königreich' },
  IE: { en: 'Ireland', de: 'Irland' },
  DE: { en: 'Germany', de: 'Deutschland' },
  AT: { en: 'Austria', de: 'Österreich' },
  CH: { en: 'Switzerland', de: 'Schweiz' },
  NL: { en: 'Netherlands', de: 'Niederlande' },
  FR: { en: 'France', de: 'Frankreich' },
  BE: { en: 'Belgium', de: 'Belgien' },
};

export const SELLERS: Record<'US' | 'GB' | 'IE' | 'DE' | 'AT' | 'CH' | 'CH_EN', Party[]> = {
  US: [
    { name: 'Northwind Traders LLC', address: ['1200 Market Street, Suite 400', 'Austin, TX 78701'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Bluebird Analytics Inc.', address: ['55 Water Street, Floor 12', 'New York, NY 10041'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Cascade Print & Supply Co.', address: ['810 Pine Avenue', 'Portland, OR 97205'], country: 'US', vatId: null, usDomestic: true },
    { name: 'Redwood Software Corp.', address: ['2100 Shoreline Blvd', 'Mountain View, CA 94043'], country: 'US', vatId: null, usDomestic: true },
  ],
  GB: [
    { name: 'Thames Valley Consulting Ltd', address: ['14 Riverside Walk', 'Reading RG1 8DB'], country: 'GB', vatId: 'GB284915673' },
    { name: 'Harbour & Finch Ltd', address: ['3 Quay Street', 'Bristol BS1 4DJ'], country: 'GB', vatId: 'GB761234590' },
    { name: 'Pennine Office Supplies Ltd', address: ['Unit 7, Mill Lane', 'Leeds LS9 8AP'], country: 'GB', vatId: 'GB193847562' },
  ],
  IE: [{ name: 'Liffey Data Services Ltd', address: ['22 Grand Canal Quay', 'Dublin 2, D02 X576'], country: 'IE', vatId: 'IE6388047V' }],
  DE: [
    { name: 'Müller & Söhne GmbH', address: ['Hauptstraße 5', '80331 München'], country: 'DE', vatId: 'DE129274202' },
    { name: 'Brandt Elektrotechnik GmbH', address: ['Industriestraße 12', '70565 Stuttgart'], country: 'DE', vatId: 'DE811569869' },
    { name: 'Nordlicht Medien UG (haftungsbeschränkt)', address: ['Speicherstadt 3', '20457 Hamburg'], country: 'DE', vatId: 'DE298345120' },
    { name: 'Schwarzwald Kaffeerösterei KG', address: ['Am Marktplatz 8', '79098 Freiburg im Breisgau'], country: 'DE', vatId: 'DE143252867' },
    { name: 'Havelland Software GmbH', address: ['Friedrichstraße 120', '10117 Berlin'], country: 'DE', vatId: 'DE267318439' },
  ],
  AT: [
    { name: 'Alpenblick IT-Services GmbH', address: ['Mariahilfer Straße 45', '1060 Wien'], country: 'AT', vatId: 'ATU63829157' },
    { name: 'Donau Logistik GmbH', address: ['Hafenstraße 17', '4020 Linz'], country: 'AT', vatId: 'ATU57193846' },
  ],
  CH: [
    { name: 'Helvetia Präzisionstechnik AG', address: ['Bahnhofstrasse 21', '8001 Zürich'], country: 'CH', vatId: 'CHE-116.281.710 MWST' },
    { name: 'Berner Treuhand GmbH', address: ['Marktgasse 9', '3011 Bern'], country: 'CH', vatId: 'CHE-432.975.118 MWST' },
    { name: 'Engadiner Holzbau AG', address: ['Via da la Staziun 4', '7500 St. Moritz'], country: 'CH', vatId: 'CHE-205.664.931 MWST' },
  ],
  CH_EN: [{ name: 'Lakeside Robotics AG', address: ['Seestrasse 100', '6300 Zug'], country: 'CH', vatId: 'CHE-318.764.225 MWST' }],
};

export const BUYERS_EN: Party[] = [
  { name: 'Acme Widgets Corp.', address: ['400 Commerce Drive', 'Columbus, OH 43215'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Greenfield Dental Group', address: ['88 Elm Street', 'Boston, MA 02110'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Summit Outdoor Gear Inc.', address: ['1500 Alpine Way', 'Denver, CO 80202'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Jane Doe', address: ['742 Evergreen Terrace', 'Springfield, IL 62704'], country: 'US', vatId: null, usDomestic: true },
  { name: 'Orion Research Ltd', address: ['5 Science Park', 'Cambridge CB4 0FZ'], country: 'GB', vatId: 'GB908172634' },
  { name: 'Kestrel Architects LLP', address: ['19 Queen Square', 'Bath BA1 2HN'], country: 'GB', vatId: null },
];
export const IRISH_BUYER: Party = { name: 'Atlantic Bakeries Ltd', address: ['4 Harbour Road', 'Galway H91 F2X0'], country: 'IE', vatId: 'IE9822134K' };
export const BUYERS_EU: Party[] = [
  { name: 'Van Dijk Logistics B.V.', address: ['Havenweg 14', '3011 AB Rotterdam'], country: 'NL', vatId: 'NL853746291B01' },
  { name: 'Société Lumière SARL', address: ['12 Rue de la Paix', '75002 Paris'], country: 'FR', vatId: 'FR40303265045' },
];
export const BUYERS_DE: Party[] = [
  { name: 'Beispiel AG', address: ['Musterweg 1', '50667 Köln'], country: 'DE', vatId: 'DE987654321' },
  { name: 'Stadtwerke Neustadt GmbH', address: ['Am Wasserturm 2', '67433 Neustadt an der Weinstraße'], country: 'DE', vatId: null },
  { name: 'Dr. Anna Schmidt', address: ['Lindenallee 7', '01067 Dresden'], country: 'DE', vatId: null },
  { name: 'Kanzlei Weber & Partner mbB', address: ['Königsallee 60', '40212 Düsseldorf'], country: 'DE', vatId: 'DE219876543' },
  { name: 'Bäckerei Huber e.K.', address: ['Dorfstraße 3', '83700 Rottach-Egern'], country: 'DE', vatId: null },
];
export const BUYERS_AT: Party[] = [
  { name: 'Tiroler Bergbahnen GmbH', address: ['Bergstraße 11', '6020 Innsbruck'], country: 'AT', vatId: 'ATU12345675' },
  { name: 'Wiener Kaffeehaus Sperl OG', address: ['Gumpendorfer Straße 11', '1060 Wien'], country: 'AT', vatId: null },
];
export const BUYERS_CH: Party[] = [
  { name: 'Gasser Bau AG', address: ['Industriestrasse 40', '6005 Luzern'], country: 'CH', vatId: 'CHE-101.234.567 MWST' },
  { name: 'Gemeinde Wädenswil', address: ['Schönenbergstrasse 4', '8820 Wädenswil'], country: 'CH', vatId: null },
  { name: 'Praxis Dr. med. Lukas Frei', address: ['Rosenweg 2', '4051 Basel'], country: 'CH', vatId: null },
];

export type QuantityKind = 'count' | 'hours' | 'one';
export interface CatalogueItem {
  description: string;
  minPrice: number;
  maxPrice: number;
  kind: QuantityKind;
  /** German unit label (for layouts with a unit column). */
  unit?: string;
}

export const ITEMS_EN: CatalogueItem[] = [
  { description: 'Consulting services', minPrice: 90, maxPrice: 220, kind: 'hours' },
  { description: 'Website maintenance (monthly)', minPrice: 150, maxPrice: 600, kind: 'one' },
  { description: 'USB-C docking station', minPrice: 89, maxPrice: 249, kind: 'count' },
  { description: 'Ergonomic office chair', minPrice: 199, maxPrice: 799, kind: 'count' },
  { description: 'Cloud hosting - Standard plan', minPrice: 29, maxPrice: 199, kind: 'count' },
  { description: 'Annual software license', minPrice: 300, maxPrice: 4800, kind: 'count' },
  { description: 'Onsite installation', minPrice: 250, maxPrice: 1500, kind: 'one' },
  { description: 'Training workshop (half day)', minPrice: 600, maxPrice: 1800, kind: 'count' },
  { description: 'Printer toner cartridge, black', minPrice: 39, maxPrice: 129, kind: 'count' },
  { description: 'Network switch 24-port', minPrice: 149, maxPrice: 489, kind: 'count' },
  { description: 'Logo design', minPrice: 400, maxPrice: 2500, kind: 'one' },
  { description: 'Copywriting, per page', minPrice: 45, maxPrice: 120, kind: 'count' },
  { description: 'Data migration project', minPrice: 2000, maxPrice: 9500, kind: 'one' },
  { description: 'Support retainer Q2', minPrice: 1200, maxPrice: 3600, kind: 'one' },
  { description: 'A4 copy paper, box of 5 reams', minPrice: 24, maxPrice: 39, kind: 'count' },
  { description: 'Security audit', minPrice: 140, maxPrice: 260, kind: 'hours' },
];

export const ITEMS_DE: CatalogueItem[] = [
  { description: 'Beratungsleistung', minPrice: 90, maxPrice: 180, kind: 'hours', unit: 'Std.' },
  { description: 'Wartung Serveranlage (monatlich)', minPrice: 180, maxPrice: 650, kind: 'one', unit: 'Monat' },
  { description: 'Montage vor Ort', minPrice: 250, maxPrice: 1400, kind: 'one', unit: 'pauschal' },
  { description: 'Bürostuhl ergonomisch', minPrice: 219, maxPrice: 849, kind: 'count', unit: 'Stk.' },
  { description: 'Druckerpapier A4, 500 Blatt', minPrice: 4, maxPrice: 9, kind: 'count', unit: 'Pack' },
  { description: 'Softwarelizenz Jahresabo', minPrice: 240, maxPrice: 3900, kind: 'count', unit: 'Stk.' },
  { description: 'Schulung Datenschutz (halbtägig)', minPrice: 490, maxPrice: 1500, kind: 'count', unit: 'Termin' },
  { description: 'Reisekostenpauschale', minPrice: 80, maxPrice: 450, kind: 'one', unit: 'pauschal' },
  { description: 'Webhosting Business-Tarif', minPrice: 19, maxPrice: 89, kind: 'count', unit: 'Monat' },
  { description: 'Übersetzung DE-EN, je Normseite', minPrice: 35, maxPrice: 70, kind: 'count', unit: 'Seite' },
  { description: 'Grafikdesign Flyer', minPrice: 350, maxPrice: 1900, kind: 'one', unit: 'pauschal' },
  { description: 'Kaffeebohnen Espresso 1 kg', minPrice: 18, maxPrice: 39, kind: 'count', unit: 'Stk.' },
  { description: 'Elektroinstallation Altbau', minPrice: 65, maxPrice: 110, kind: 'hours', unit: 'Std.' },
  { description: 'Kabelkanal 2 m, weiß', minPrice: 6, maxPrice: 19, kind: 'count', unit: 'Stk.' },
  { description: 'Jahresabschluss 2025', minPrice: 1800, maxPrice: 6500, kind: 'one', unit: 'pauschal' },
  { description: 'Lagerfläche Palettenstellplatz', minPrice: 12, maxPrice: 28, kind: 'count', unit: 'Monat' },
];

/** The party's country as written in `language`. */
export function countryLine(party: Party, language: 'en' | 'de'): string {
  return COUNTRY_NAMES[party.country][language];
}

// ---------------------------------------------------------------------------------------------------------
// The evaluation corpus: French-speaking parties, French and cheap items

/** Country names in French, for the French layouts. */
export const COUNTRY_NAMES_FR: Record<Country, string> = {
  US: 'États-Unis',
  GB: 'Royaume-Uni',
  IE: 'Irlande',
  DE: 'Allemagne',
  AT: 'Autriche',
  CH: 'Suisse',
  NL: 'Pays-Bas',
  FR: 'France',
  BE: 'Belgique',
};

/** French-speaking sellers by country. */
export const SELLERS_FR: Record<'FR' | 'BE' | 'CH', Party[]> = {
  FR: [
    { name: 'Atelier Lumière SAS', address: ['14 rue des Tanneurs', '69002 Lyon'], country: 'FR', vatId: 'FR32812345678' },
    { name: 'Garonne Conseil SAS', address: ['27 quai des Chartrons', '33000 Bordeaux'], country: 'FR', vatId: 'FR15438920177' },
    { name: 'Provence Informatique SARL', address: ['5 boulevard Longchamp', '13001 Marseille'], country: 'FR', vatId: 'FR83790456123' },
    { name: 'Imprimerie du Nord SARL', address: ['8 avenue de la Gare', '59000 Lille'], country: 'FR', vatId: 'FR61503812764' },
  ],
  BE: [
    { name: 'Meuse Logistique SRL', address: ['Rue de la Station 42', '5000 Namur'], country: 'BE', vatId: 'BE0456789123' },
    { name: 'Bruxelles Design SA', address: ['Avenue Louise 120', '1050 Bruxelles'], country: 'BE', vatId: 'BE0823456710' },
  ],
  CH: [
    { name: 'Léman Horlogerie SA', address: ['Rue du Rhône 30', '1204 Genève'], country: 'CH', vatId: 'CHE-109.876.543 TVA' },
    { name: 'Vaud Ingénierie Sàrl', address: ['Avenue de la Gare 12', '1003 Lausanne'], country: 'CH', vatId: 'CHE-276.541.908 TVA' },
  ],
};

/** French-speaking buyers by country. */
export const BUYERS_FR: Record<'FR' | 'BE' | 'CH', Party[]> = {
  FR: [
    { name: 'Cabinet Dupont & Associés', address: ['3 rue de Rivoli', '75004 Paris'], country: 'FR', vatId: 'FR72412345678' },
    { name: 'Hôtel Beau Rivage SAS', address: ['2 promenade des Anglais', '06000 Nice'], country: 'FR', vatId: 'FR09529876543' },
    { name: 'Mairie de Villeurbanne', address: ['Place Lazare-Goujon', '69100 Villeurbanne'], country: 'FR', vatId: null },
    { name: 'Marie Lefèvre', address: ['18 rue Victor Hugo', '44000 Nantes'], country: 'FR', vatId: null },
  ],
  BE: [
    { name: 'Brasserie du Parc SRL', address: ['Rue Royale 8', '1000 Bruxelles'], country: 'BE', vatId: 'BE0412345678' },
    { name: "Commune d'Ottignies", address: ['Avenue des Combattants 35', '1340 Ottignies'], country: 'BE', vatId: null },
  ],
  CH: [
    { name: 'Clinique des Alpes SA', address: ['Route de Sion 5', '1950 Sion'], country: 'CH', vatId: 'CHE-112.345.678 TVA' },
    { name: 'Commune de Nyon', address: ['Place du Château 3', '1260 Nyon'], country: 'CH', vatId: null },
  ],
};

/** Continental sellers that write their invoices in English. */
export const SELLERS_EN_CONTINENTAL: Party[] = [
  { name: 'Zuiderzee Systems B.V.', address: ['Keizersgracht 210', '1016 DX Amsterdam'], country: 'NL', vatId: 'NL812345678B01' },
  { name: 'Atelier Lumière SAS', address: ['14 rue des Tanneurs', '69002 Lyon'], country: 'FR', vatId: 'FR32812345678' },
  { name: 'Brandt Elektrotechnik GmbH', address: ['Industriestraße 12', '70565 Stuttgart'], country: 'DE', vatId: 'DE811569869' },
  { name: 'Alpenblick IT-Services GmbH', address: ['Mariahilfer Straße 45', '1060 Wien'], country: 'AT', vatId: 'ATU63829157' },
  { name: 'Meuse Logistique SRL', address: ['Rue de la Station 42', '5000 Namur'], country: 'BE', vatId: 'BE0456789123' },
];

/** The line items French invoices draw from (with a unit label for unit columns). */
export const ITEMS_FR: CatalogueItem[] = [
  { description: 'Prestation de conseil', minPrice: 90, maxPrice: 190, kind: 'hours', unit: 'h' },
  { description: 'Maintenance informatique (mensuelle)', minPrice: 150, maxPrice: 600, kind: 'one', unit: 'mois' },
  { description: 'Installation sur site', minPrice: 250, maxPrice: 1400, kind: 'one', unit: 'forfait' },
  { description: 'Fauteuil de bureau ergonomique', minPrice: 199, maxPrice: 789, kind: 'count', unit: 'pce' },
  { description: 'Ramette papier A4 80 g', minPrice: 4, maxPrice: 9, kind: 'count', unit: 'pce' },
  { description: 'Licence logicielle annuelle', minPrice: 240, maxPrice: 3900, kind: 'count', unit: 'pce' },
  { description: 'Formation RGPD (demi-journée)', minPrice: 490, maxPrice: 1500, kind: 'count', unit: 'session' },
  { description: 'Frais de déplacement', minPrice: 80, maxPrice: 450, kind: 'one', unit: 'forfait' },
  { description: 'Hébergement web offre Pro', minPrice: 19, maxPrice: 89, kind: 'count', unit: 'mois' },
  { description: 'Traduction FR-EN, par page', minPrice: 35, maxPrice: 70, kind: 'count', unit: 'page' },
  { description: 'Création graphique plaquette', minPrice: 350, maxPrice: 1900, kind: 'one', unit: 'forfait' },
  { description: 'Café en grains 1 kg', minPrice: 18, maxPrice: 39, kind: 'count', unit: 'pce' },
  { description: 'Mise aux normes électriques', minPrice: 65, maxPrice: 110, kind: 'hours', unit: 'h' },
  { description: 'Câble réseau Cat6 5 m', minPrice: 6, maxPrice: 19, kind: 'count', unit: 'pce' },
  { description: 'Audit de sécurité', minPrice: 140, maxPrice: 260, kind: 'hours', unit: 'h' },
  { description: 'Location de salle (journée)', minPrice: 300, maxPrice: 900, kind: 'one', unit: 'jour' },
];

/** Cheap items, by language: their unit prices (below 10) print as `1,250` when a layout shows three decimals. */
export const CHEAP_ITEMS: Record<'en' | 'de' | 'fr', CatalogueItem[]> = {
  en: [
    { description: 'Cable ties, per pack', minPrice: 1, maxPrice: 4, kind: 'count' },
    { description: 'Hex bolts M6, per piece', minPrice: 1, maxPrice: 2, kind: 'count' },
  ],
  de: [
    { description: 'Kabelbinder, je Packung', minPrice: 1, maxPrice: 4, kind: 'count', unit: 'Pack' },
    { description: 'Sechskantschraube M6', minPrice: 1, maxPrice: 2, kind: 'count', unit: 'Stk.' },
  ],
  fr: [
    { description: 'Colliers de serrage, par sachet', minPrice: 1, maxPrice: 4, kind: 'count', unit: 'sachet' },
    { description: 'Vis hexagonale M6', minPrice: 1, maxPrice: 2, kind: 'count', unit: 'pce' },
  ],
};

/** The party's country in a language, for address blocks. */
export function countryName(country: Country, language: 'en' | 'de' | 'fr'): string {
  return language === 'fr' ? COUNTRY_NAMES_FR[country] : COUNTRY_NAMES[country][language];
}
