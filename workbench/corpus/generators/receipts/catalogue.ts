/**
 * What the receipt generator draws from: fictitious merchants (names, addresses, phone numbers, VAT IDs)
 * per country and kind, the goods and dishes they sell, and each country's tax rates. Everything is made up.
 */

/** The merchant countries of the receipt corpus. */
export type Country = 'US' | 'GB' | 'DE' | 'AT' | 'CH' | 'FR' | 'BE';

/** One fictitious merchant. */
export interface Merchant {
  name: string;
  /** Address lines as printed under the name (street, then postcode and city). */
  address: string[];
  phone: string;
  vatId: string | null;
  country: Country;
}

/** One thing a merchant sells: price in cents (per kg when `perKg`), and its VAT class. */
export interface Good {
  description: string;
  cents: number;
  reduced: boolean;
  perKg?: boolean;
}

/** The currency of each merchant country. */
export const CURRENCY_OF: Record<Country, string> = { US: 'USD', GB: 'GBP', DE: 'EUR', AT: 'EUR', CH: 'CHF', FR: 'EUR', BE: 'EUR' };

/** VAT rates in percent: standard, reduced (food), restaurant, transport. US rates are state sales taxes. */
export const VAT: Record<Exclude<Country, 'US'>, { standard: number; reduced: number; restaurant: number; transport: number }> = {
  GB: { standard: 20, reduced: 0, restaurant: 20, transport: 0 },
  DE: { standard: 19, reduced: 7, restaurant: 19, transport: 7 },
  AT: { standard: 20, reduced: 10, restaurant: 10, transport: 10 },
  CH: { standard: 8.1, reduced: 2.6, restaurant: 8.1, transport: 8.1 },
  FR: { standard: 20, reduced: 5.5, restaurant: 10, transport: 10 },
  BE: { standard: 21, reduced: 6, restaurant: 12, transport: 6 },
};

const m = (name: string, address: string[], phone: string, vatId: string | null, country: Country): Merchant => ({ name, address, phone, vatId, country });

/** Shops with a till (supermarkets, delis, kiosks, sports and bike shops). */
export const SHOPS: Record<Country, Merchant[]> = {
  US: [
    m('FRESHWAY MARKET', ['1450 Broadway', 'New York, NY 10018'], '(212) 555-0147', null, 'US'),
    m('Green Basket Grocery', ['88 Elm Street', 'Portland, OR 97205'], '(503) 555-0162', null, 'US'),
    m('Sunset Corner Store', ['2210 Mission St', 'San Francisco, CA 94110'], '(415) 555-0183', null, 'US'),
  ],
  GB: [
    m("Hartley's Food Hall", ['12 High Street', 'Oxford OX1 4AA'], '01865 555 210', 'GB284553107', 'GB'),
    m('Northgate Grocers Ltd', ['41 Northgate', 'Chester CH1 2HQ'], '01244 555 876', 'GB 391 2276 54', 'GB'),
  ],
  DE: [
    m('Frischmarkt Holzer', ['Lindenstraße 14', '10969 Berlin'], 'Tel. 030 61234567', 'DE284761935', 'DE'),
    m('Nahkauf Brunner OHG', ['Hauptstraße 52', '79098 Freiburg'], 'Tel. 0761 2345678', 'DE193847260', 'DE'),
  ],
  AT: [m('Greißlerei Moser', ['Neubaugasse 21', '1070 Wien'], 'Tel. +43 1 5234567', 'ATU63829157', 'AT')],
  CH: [
    m('Velo Huber AG', ['Seestrasse 112', '8002 Zürich'], 'Tel. 044 201 33 44', 'CHE-123.456.789 MWST', 'CH'),
    m('Bergsport Gasser GmbH', ['Bahnhofplatz 3', '3800 Interlaken'], 'Tel. 033 822 11 90', 'CHE-287.610.442 MWST', 'CH'),
    m('Elektro Räber AG', ['Pilatusstrasse 40', '6003 Luzern'], 'Tel. 041 210 55 80', 'CHE-415.902.336 MWST', 'CH'),
  ],
  FR: [
    m('MARCHÉ DES TILLEULS', ['12 rue des Tilleuls', '69003 Lyon'], 'Tél. 04 78 12 34 56', 'FR12812345678', 'FR'),
    m('Épicerie Lefèvre', ['5 place du Marché', '35000 Rennes'], 'Tél. 02 99 45 67 89', 'FR47529301846', 'FR'),
  ],
  BE: [m('Supérette du Sablon', ['Rue Haute 140', '1000 Bruxelles'], 'Tél. +32 2 512 34 56', 'BE0456.789.123', 'BE')],
};

/** Restaurants, brasseries and pubs. */
export const RESTAURANTS: Record<'US' | 'GB' | 'DE' | 'AT' | 'FR' | 'BE', Merchant[]> = {
  US: [
    m('Blue Harbor Grill', ['220 Atlantic Ave', 'Boston, MA 02110'], '(617) 555-0199', null, 'US'),
    m('Maple & Rye Diner', ['615 N State St', 'Chicago, IL 60654'], '(312) 555-0126', null, 'US'),
  ],
  GB: [m('The Brass Lantern', ['5 Market Place', 'York YO1 8RS'], '01904 555 331', 'GB 502 8841 19', 'GB')],
  DE: [
    m('Gasthaus Zum Hirschen', ['Marktplatz 3', '83471 Berchtesgaden'], 'Tel. 08652 12345', 'DE311470582', 'DE'),
    m('Brauhaus am Dom', ['Domplatz 9', '50667 Köln'], 'Tel. 0221 9876543', null, 'DE'),
  ],
  AT: [m('Beisl Zur Goldenen Gans', ['Josefstädter Straße 18', '1080 Wien'], 'Tel. +43 1 4051234', 'ATU57193846', 'AT')],
  FR: [
    m('Brasserie du Pont', ['8 quai Saint-Antoine', '69002 Lyon'], 'Tél. 04 78 42 10 10', 'FR63402918577', 'FR'),
    m('Le Petit Zinc', ['27 rue de Charonne', '75011 Paris'], 'Tél. 01 43 55 21 09', 'FR90817263544', 'FR'),
  ],
  BE: [m('Taverne Saint-Géry', ['Place Saint-Géry 4', '1000 Bruxelles'], 'Tél. +32 2 511 22 33', 'BE0612.345.987', 'BE')],
};

/** Taxi companies. */
export const TAXIS: Record<'US' | 'GB' | 'FR' | 'BE', Merchant[]> = {
  US: [
    m('Yellow Star Cab Co.', ['501 W 36th St', 'New York, NY 10018'], '(212) 555-0110', null, 'US'),
    m('Bay City Taxi', ['1750 Folsom St', 'San Francisco, CA 94103'], '(415) 555-0137', null, 'US'),
  ],
  GB: [m('Capital Cars Ltd', ['41 Commercial Street', 'London E1 6AN'], '020 7946 0321', null, 'GB')],
  FR: [m('Taxi Étoile Lyonnais', ['14 rue Garibaldi', '69006 Lyon'], 'Tél. 04 72 10 20 30', 'FR28451203967', 'FR')],
  BE: [m('Taxis Verts Bruxelles', ['Avenue Louise 290', '1050 Ixelles'], 'Tél. +32 2 349 49 49', 'BE0417.853.204', 'BE')],
};

/** Fuel stations. */
export const FUEL_STATIONS: Record<'DE' | 'AT', Merchant[]> = {
  DE: [
    m('Tankstelle Rhein-Süd', ['Raffineriestraße 8', '68199 Mannheim'], 'Tel. 0621 8765432', 'DE247118305', 'DE'),
    m('Autohof Elbtal GmbH', ['Dresdner Straße 120', '01689 Weinböhla'], 'Tel. 035243 4567', 'DE219930476', 'DE'),
  ],
  AT: [m('Tankstelle Inntal', ['Innstraße 44', '6020 Innsbruck'], 'Tel. +43 512 345678', 'ATU12345675', 'AT')],
};

/** US sales tax rates by state, in percent (0: no sales tax printed). */
export const US_SALES_TAX: Record<string, number> = { NY: 8.875, OR: 0, CA: 8.625, MA: 6.25, IL: 10.25 };

const g = (description: string, cents: number, reduced = true, perKg = false): Good =>
  perKg ? { description, cents, reduced, perKg } : { description, cents, reduced };

/** Till goods by language; descriptions never start with a number. */
export const GROCERIES: Record<'en' | 'de' | 'fr', Good[]> = {
  en: [
    g('BANANAS', 69),
    g('GREEK YOGURT', 299),
    g('WHOLE MILK 1 GAL', 429),
    g('SOURDOUGH LOAF', 549),
    g('EGGS LARGE DOZEN', 389),
    g('CHEDDAR BLOCK', 612),
    g('ORANGE JUICE', 479),
    g('PAPER TOWELS', 899, false),
    g('DISH SOAP', 349, false),
    g('COFFEE BEANS 12OZ', 1199),
    g('SPARKLING WATER', 125),
    g('AA BATTERIES 4PK', 749, false),
  ],
  de: [
    g('Bio Vollmilch 3,8%', 129),
    g('Bananen', 199, true, true),
    g('Roggenbrot 750g', 289),
    g('Gouda mittelalt', 249),
    g('Äpfel Elstar', 249, true, true),
    g('Mineralwasser 1,5l', 59),
    g('Spülmittel', 195, false),
    g('Kaffee gemahlen', 599),
    g('Butter 250g', 219),
    g('Küchenrolle 4er', 349, false),
    g('Joghurt Natur', 79),
    g('Zahnpasta', 145, false),
  ],
  fr: [
    g('LAIT DEMI-ECREME 1L', 109),
    g('POMMES GOLDEN', 199, true, true),
    g('BAGUETTE TRADITION', 120),
    g('COMTE AOP', 459),
    g('YAOURT NATURE X4', 189),
    g('EAU MINERALE 1,5L', 65),
    g('TOMATES GRAPPE', 349, true, true),
    g('LESSIVE LIQUIDE', 799, false),
    g('CAFE MOULU', 429),
    g('SAVON DE MARSEILLE', 250, false),
    g('BEURRE DOUX 250G', 235),
    g('JUS D ORANGE', 289),
  ],
};

/** Dishes and drinks by language (restaurant VAT applies to all). */
export const DISHES: Record<'en' | 'de' | 'fr', Good[]> = {
  en: [
    g('Clam Chowder', 850),
    g('Lobster Roll', 3200),
    g('Caesar Salad', 1400),
    g('Cheeseburger', 1650),
    g('Fish & Chips', 1895),
    g('Iced Tea', 395),
    g('Draft IPA', 800),
    g('House Red Glass', 1200),
    g('Apple Pie', 900),
  ],
  de: [
    g('Weißbier 0,5 l', 490),
    g('Schweinebraten mit Knödel', 1690),
    g('Wiener Schnitzel', 2150),
    g('Käsespätzle', 1450),
    g('Apfelschorle 0,4 l', 390),
    g('Kaiserschmarrn', 1190),
    g('Tagessuppe', 650),
    g('Espresso', 280),
    g('Grauburgunder 0,2 l', 720),
  ],
  fr: [
    g('Kir vin blanc', 450),
    g('Plat du jour', 1450),
    g('Entrecôte frites', 2450),
    g('Salade lyonnaise', 1290),
    g('Quenelle de brochet', 1890),
    g('Carafe de vin rouge', 1600),
    g('Café gourmand', 890),
    g('Crème brûlée', 750),
    g('Eau gazeuse 50 cl', 490),
  ],
};

/** Swiss shop goods (priced so that each receipt reaches the thousands). */
export const SWISS_GOODS: Good[] = [
  g('Rennvelo Carbon Pro', 284900, false),
  g('E-Bike Trekking 625 Wh', 389000, false),
  g('Skitourenset komplett', 129950, false),
  g('Espressomaschine Barista', 104900, false),
  g('Veloschloss Faltschloss', 3990, false),
  g('Velohelm Urban', 12900, false),
  g('Trinkflasche 750 ml', 1490, false),
  g('Kaffeebohnen 1 kg', 2450, true),
  g('Steckdosenleiste 6-fach', 2290, false),
];
