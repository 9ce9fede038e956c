/**
 * The evaluation corpus's parties and catalogues (all fictitious): French-speaking sellers and buyers in
 * France, Belgium and Switzerland, continental sellers that write English, French line items, and a few
 * cheap items whose unit prices print as `1,250`-like numbers.
 */
import { COUNTRY_NAMES, type CatalogueItem, type Country, type Party } from './catalogue.js';

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
