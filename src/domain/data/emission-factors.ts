// The embedded default factor set (carbon and nature), compiled from docs/reference figures; every
// dataset, version, licence and assumption is written down in data/SOURCES.md. Operator-imported
// factors (same EmissionFactor fields, e.g. from CSV) are passed to findFactor ahead of these.
import type { EmissionFactor } from '../types.js'

/** The MCC span a factor must cover to act as a default (any MCC): mccFrom 0, mccTo 9999. */
export const ANY_MCC = { from: 0, to: 9999 } as const

const USEEIO = {
  source: 'US EPA Supply Chain GHG Emission Factors v1.3 by NAICS-6 (USEEIO v2.2, AR5), with margins',
  version: 'v1.3.0 (DOI 10.23719/1531143)',
  licence: 'US Government work (public domain in the US)',
  baseCurrency: 'USD',
  priceYear: 2022,
} as const

const EXIOBASE = {
  source: 'Memo Bank carbon-footprint payment-cards/results.csv (EXIOBASE 3, scopes 1-3)',
  version: 'memobank/carbon-footprint@eaed4438, data year 2019',
  licence: 'CC BY-SA 4.0 (derived from EXIOBASE 3, CC BY-SA 4.0)',
  baseCurrency: 'EUR',
  priceYear: 2019,
} as const

const NATURE = {
  source: 'Canopy illustrative nature factors (placeholder, not GLOBIO output)',
  version: 'illustrative-0.1',
  licence: 'Apache-2.0 (Canopy)',
  baseCurrency: 'EUR',
  priceYear: 2019,
} as const

/**
 * Tailpipe CO2 of fuel bought at MCC 5541/5542, per unit of spend: 8.887 kg CO2 per US gallon
 * (EPA) divided by an assumed pump price.
 * USD 2022: 8.887 / 3.95 USD per gallon (US regular, 2022 annual average) = 2.2499 kg/USD.
 * EUR 2019: 2.3477 kg per litre (8.887 / 3.785411784) / 1.50 EUR per litre = 1.5651 kg/EUR.
 */
export const TAILPIPE_KG_PER_UNIT = { USD2022: '2.2499', EUR2019: '1.5651' } as const

type ExiobaseRow = readonly [gbr: string, deu: string, fra: string]

const RETAIL: ExiobaseRow = ['0.196', '0.241', '0.148']
const FOOD_SERVICE: ExiobaseRow = ['0.119', '0.201', '0.106']
const FUEL: ExiobaseRow = ['0.330', '0.326', '0.148']
const AIR: ExiobaseRow = ['0.939', '0.801', '0.976']
const CLOTHING: ExiobaseRow = ['0.257', '0.533', '0.226']
const ROAD: ExiobaseRow = ['0.128', '0.240', '0.230']
const HEALTH: ExiobaseRow = ['0.130', '0.060', '0.047']

interface CarbonRow {
  readonly mcc: number
  readonly description: string
  /** NAICS-6 commodity proxy used for the USEEIO figure. */
  readonly naics: string
  /** kg CO2e per 2022 USD, purchaser price, with margins. */
  readonly useeio: string
  /** kg CO2e per EUR (2019) for merchants in GBR, DEU, FRA. */
  readonly exiobase: ExiobaseRow
  readonly fuel?: true
  readonly note?: string
}

// data/SOURCES.md §1.3: MCC, greggles description, commodity proxy, USEEIO with margins, EXIOBASE GB/DE/FR.
const CARBON_ROWS: readonly CarbonRow[] = [
  { mcc: 5411, description: 'Grocery Stores, Supermarkets', naics: '311999', useeio: '0.401', exiobase: RETAIL },
  { mcc: 5499, description: 'Misc. Food Stores - Convenience and Specialty', naics: '311999', useeio: '0.401', exiobase: RETAIL },
  { mcc: 5462, description: 'Bakeries', naics: '311811', useeio: '0.253', exiobase: RETAIL },
  { mcc: 5812, description: 'Eating places and Restaurants', naics: '722511', useeio: '0.194', exiobase: FOOD_SERVICE },
  { mcc: 5814, description: 'Fast Food Restaurants', naics: '722513', useeio: '0.255', exiobase: FOOD_SERVICE },
  { mcc: 5813, description: 'Drinking Places (bars, nightclubs)', naics: '722410', useeio: '0.132', exiobase: FOOD_SERVICE },
  { mcc: 5541, description: 'Service Stations', naics: '324110', useeio: '0.27', exiobase: FUEL, fuel: true },
  { mcc: 5542, description: 'Automated Fuel Dispensers', naics: '324110', useeio: '0.27', exiobase: FUEL, fuel: true },
  { mcc: 4511, description: 'Airlines, Air Carriers', naics: '481111', useeio: '0.644', exiobase: AIR },
  { mcc: 5651, description: 'Family Clothing Stores', naics: '315990', useeio: '0.12', exiobase: CLOTHING },
  { mcc: 5691, description: "Men's and Women's Clothing Stores", naics: '315220', useeio: '0.12', exiobase: CLOTHING },
  { mcc: 5661, description: 'Shoe Stores', naics: '316210', useeio: '0.282', exiobase: CLOTHING },
  { mcc: 5732, description: 'Electronic Sales', naics: '334310', useeio: '0.081', exiobase: RETAIL },
  { mcc: 5734, description: 'Computer Software Stores', naics: '511210', useeio: '0.08', exiobase: RETAIL },
  { mcc: 7011, description: 'Lodging - Hotels, Motels, Resorts', naics: '721110', useeio: '0.145', exiobase: FOOD_SERVICE },
  { mcc: 4121, description: 'Taxicabs and Limousines', naics: '485310', useeio: '0.566', exiobase: ROAD },
  { mcc: 4111, description: 'Local/Suburban Commuter Passenger Transportation', naics: '485113', useeio: '0.566', exiobase: ROAD },
  { mcc: 4112, description: 'Passenger Railways', naics: '482111', useeio: '0.466', exiobase: ['0.355', '0.224', '0.312'] },
  { mcc: 4131, description: 'Bus Lines', naics: '485210', useeio: '0.566', exiobase: ROAD },
  { mcc: 7512, description: 'Car Rental Companies', naics: '532111', useeio: '0.11', exiobase: ['0.107', '0.061', '0.094'] },
  { mcc: 5912, description: 'Drug Stores and Pharmacies', naics: '325412', useeio: '0.099', exiobase: RETAIL },
  { mcc: 5977, description: 'Cosmetic Stores', naics: '325620', useeio: '0.194', exiobase: RETAIL },
  { mcc: 5992, description: 'Florists', naics: '111422', useeio: '0.307', exiobase: RETAIL },
  { mcc: 5311, description: 'Department Stores', naics: '452210', useeio: '0.164', exiobase: RETAIL },
  { mcc: 5310, description: 'Discount Stores', naics: '452319', useeio: '0.164', exiobase: RETAIL },
  { mcc: 5300, description: 'Wholesale Clubs', naics: '452311', useeio: '0.164', exiobase: RETAIL },
  { mcc: 5999, description: 'Miscellaneous and Specialty Retail Stores', naics: '453998', useeio: '0.111', exiobase: RETAIL },
  { mcc: 5942, description: 'Book Stores', naics: '511130', useeio: '0.107', exiobase: RETAIL },
  { mcc: 5945, description: 'Hobby, Toy, and Game Shops', naics: '339930', useeio: '0.146', exiobase: RETAIL },
  { mcc: 5941, description: 'Sporting Goods Stores', naics: '339920', useeio: '0.167', exiobase: RETAIL },
  { mcc: 5712, description: 'Furniture, Home Furnishings, and Equipment Stores', naics: '337121', useeio: '0.188', exiobase: RETAIL },
  { mcc: 5921, description: 'Package Stores - Beer, Wine, and Liquor', naics: '312130', useeio: '0.182', exiobase: RETAIL },
  { mcc: 4814, description: 'Telecommunication Services', naics: '517312', useeio: '0.096', exiobase: ['0.072', '0.113', '0.061'] },
  {
    mcc: 4900, description: 'Utilities - Electric, Gas, Water, Sanitary', naics: '221210', useeio: '0.532',
    exiobase: ['0.106', '0.126', '0.264'],
    note: 'USEEIO has no electricity factor; the natural-gas distribution factor stands in for the whole MCC.',
  },
  { mcc: 7832, description: 'Motion Picture Theaters', naics: '512131', useeio: '0.052', exiobase: ['0.137', '0.243', '0.130'] },
  { mcc: 7230, description: 'Barber and Beauty Shops', naics: '812112', useeio: '0.125', exiobase: ['0.097', '0.101', '0.126'] },
  { mcc: 7997, description: 'Membership Clubs (Sports, Recreation, Athletic)', naics: '713940', useeio: '0.235', exiobase: ['0.074', '0.074', '0.066'] },
  { mcc: 8011, description: 'Doctors and Physicians', naics: '621111', useeio: '0.083', exiobase: HEALTH },
  { mcc: 8062, description: 'Hospitals', naics: '622110', useeio: '0.145', exiobase: HEALTH },
  { mcc: 8398, description: 'Charitable and Social Service Organizations', naics: '813219', useeio: '0.059', exiobase: HEALTH },
  { mcc: 4722, description: 'Travel Agencies, Tour Operators', naics: '561510', useeio: '0.088', exiobase: ['0.133', '0.214', '0.261'] },
]

const EXIOBASE_COUNTRIES = ['GBR', 'DEU', 'FRA'] as const

function carbonFactors(row: CarbonRow): EmissionFactor[] {
  const useeioNote = [`${row.description}; NAICS ${row.naics} commodity proxy.`, row.note, row.fuel ? 'Plus tailpipe CO2 at an assumed pump price.' : undefined]
    .filter((part) => part !== undefined)
    .join(' ')
  const useeio = (region: 'USA' | 'WORLD'): EmissionFactor => ({
    id: `useeio-1.3-${row.mcc}-${region}`,
    kind: 'carbon',
    mccFrom: row.mcc,
    mccTo: row.mcc,
    region,
    value: row.useeio,
    ...USEEIO,
    tailpipeValue: row.fuel ? TAILPIPE_KG_PER_UNIT.USD2022 : undefined,
    note: region === 'WORLD' ? `${useeioNote} US factor used as a proxy outside GBR/DEU/FRA/USA.` : useeioNote,
  })
  const exiobase = EXIOBASE_COUNTRIES.map((region, index): EmissionFactor => ({
    id: `exiobase-memobank-2019-${row.mcc}-${region}`,
    kind: 'carbon',
    mccFrom: row.mcc,
    mccTo: row.mcc,
    region,
    value: row.exiobase[index] ?? '0',
    ...EXIOBASE,
    tailpipeValue: row.fuel ? TAILPIPE_KG_PER_UNIT.EUR2019 : undefined,
    note: row.fuel ? `${row.description}. Plus tailpipe CO2 at an assumed pump price.` : row.description,
  }))
  return [useeio('USA'), useeio('WORLD'), ...exiobase]
}

const CARBON_DEFAULTS: readonly EmissionFactor[] = [
  ...EXIOBASE_COUNTRIES.map((region, index): EmissionFactor => ({
    id: `exiobase-memobank-2019-default-${region}`,
    kind: 'carbon',
    mccFrom: ANY_MCC.from,
    mccTo: ANY_MCC.to,
    region,
    value: RETAIL[index] ?? '0',
    ...EXIOBASE,
    note: 'Default for unlisted MCCs: the "Retail trade services" sector that most MCCs map to.',
  })),
  {
    id: 'useeio-1.3-default-WORLD',
    kind: 'carbon',
    mccFrom: ANY_MCC.from,
    mccTo: ANY_MCC.to,
    region: 'WORLD',
    value: '0.173',
    ...USEEIO,
    note: 'Default for unlisted MCCs: median of the with-margins column over all 1,016 commodities.',
  },
]

interface NatureRow {
  readonly mccs: readonly number[]
  /** m² of intact nature lost (MSA-weighted) per EUR (2019). */
  readonly value: string
  readonly sector: string
}

// Illustrative only: sector ordering by land-use intensity, magnitudes set by judgement. Replace.
const NATURE_ROWS: readonly NatureRow[] = [
  { mccs: [5992], value: '0.40', sector: 'floriculture' },
  { mccs: [5411, 5499, 5462, 5921], value: '0.35', sector: 'food and drink retail' },
  { mccs: [5651, 5691, 5661], value: '0.25', sector: 'clothing and footwear' },
  { mccs: [5812, 5814, 5813], value: '0.20', sector: 'food service' },
  { mccs: [5712], value: '0.15', sector: 'furniture' },
  { mccs: [5311, 5310, 5300, 5999, 5945, 5941, 5942, 5912, 5977], value: '0.10', sector: 'general retail' },
  { mccs: [5541, 5542], value: '0.10', sector: 'fuel' },
  { mccs: [4511, 7011], value: '0.08', sector: 'air travel and lodging' },
  { mccs: [4900], value: '0.06', sector: 'utilities' },
  { mccs: [5732, 4121, 4111, 4112, 4131, 7512], value: '0.05', sector: 'electronics and ground transport' },
  { mccs: [5734, 4814, 7832, 7230, 7997, 8011, 8062, 8398, 4722], value: '0.03', sector: 'services' },
]

function natureFactor(mccFrom: number, mccTo: number, value: string, sector: string, id: string): EmissionFactor {
  return {
    id,
    kind: 'nature',
    mccFrom,
    mccTo,
    region: 'WORLD',
    value,
    ...NATURE,
    note: `Illustrative estimate for ${sector}; m² MSA-weighted area per EUR. Replace with GLOBIO/GBS-derived factors.`,
  }
}

/**
 * The default factor set: for each of the 41 common MCCs of data/SOURCES.md §1.3, USEEIO v1.3 rows
 * for USA and WORLD (kg CO2e per 2022 USD) and EXIOBASE/Memo Bank rows for GBR, DEU and FRA
 * (kg CO2e per 2019 EUR); default rows covering MCC 0–9999; and an illustrative nature set
 * (m² per 2019 EUR, WORLD). MCC range groups (airlines, car rental, hotels) carry no rows of their
 * own: findFactor maps them to 4511/7512/7011.
 */
export const DEFAULT_EMISSION_FACTORS: readonly EmissionFactor[] = Object.freeze([
  ...CARBON_ROWS.flatMap(carbonFactors),
  ...CARBON_DEFAULTS,
  ...NATURE_ROWS.flatMap((row) =>
    row.mccs.map((mcc) => natureFactor(mcc, mcc, row.value, row.sector, `nature-illustrative-0.1-${mcc}-WORLD`)),
  ),
  natureFactor(ANY_MCC.from, ANY_MCC.to, '0.10', 'any sector (default)', 'nature-illustrative-0.1-default-WORLD'),
])

/** The MCCs that have their own rows in the default set (for documentation and tests). */
export const DEFAULT_FACTOR_MCCS: readonly number[] = CARBON_ROWS.map((row) => row.mcc)
