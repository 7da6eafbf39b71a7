// Country codes (ISO 3166-1) and first-level subdivisions where tax or project matching needs them.
// Only i18n-iso-countries' code tables are loaded (index.js), not its 78 language files.
import countries from 'i18n-iso-countries/index.js'
import { DomainError } from './errors.js'

/** True when `alpha3` is an assigned ISO 3166-1 alpha-3 code. Case-sensitive: upper case only. */
export function isKnownCountry(alpha3: string): boolean {
  return toAlpha2(alpha3) !== undefined
}

/** ISO 3166-1 alpha-3 → alpha-2 ("GBR" → "GB"); undefined for unknown or non-upper-case input. */
export function toAlpha2(alpha3: string): string | undefined {
  if (!/^[A-Z]{3}$/.test(alpha3)) return undefined
  return countries.alpha3ToAlpha2(alpha3)
}

// Country names come from the ICU data Node ships (full ICU since Node 13), not from i18n-iso-countries' language files.
const regionNames = new Map<string, Intl.DisplayNames>()

/** The country's name in `locale` ("RWA", "de-DE" → "Ruanda"); undefined for an unknown code. */
export function countryName(alpha3: string, locale: string): string | undefined {
  const alpha2 = toAlpha2(alpha3)
  if (alpha2 === undefined) return undefined
  let names = regionNames.get(locale)
  if (names === undefined) {
    names = new Intl.DisplayNames([locale], { type: 'region', fallback: 'none' })
    regionNames.set(locale, names)
  }
  return names.of(alpha2)
}

const US_STATES: Readonly<Record<string, string>> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
  AS: 'American Samoa',
  GU: 'Guam',
  MP: 'Northern Mariana Islands',
  PR: 'Puerto Rico',
  VI: 'U.S. Virgin Islands',
  UM: 'United States Minor Outlying Islands',
}

const CA_PROVINCES: Readonly<Record<string, string>> = {
  AB: 'Alberta',
  BC: 'British Columbia',
  MB: 'Manitoba',
  NB: 'New Brunswick',
  NL: 'Newfoundland and Labrador',
  NS: 'Nova Scotia',
  NT: 'Northwest Territories',
  NU: 'Nunavut',
  ON: 'Ontario',
  PE: 'Prince Edward Island',
  QC: 'Quebec',
  SK: 'Saskatchewan',
  YT: 'Yukon',
}

function nameKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z]+/g, ' ')
    .trim()
}

function indexByName(codes: Readonly<Record<string, string>>, aliases: Readonly<Record<string, string>>): ReadonlyMap<string, string> {
  const index = new Map<string, string>()
  for (const [code, name] of Object.entries(codes)) index.set(nameKey(name), code)
  for (const [alias, code] of Object.entries(aliases)) index.set(nameKey(alias), code)
  return index
}

interface SubdivisionTable {
  /** ISO 3166-1 alpha-2 of the country: the prefix of its ISO 3166-2 codes ("CA" in "CA-ON"). */
  readonly prefix: string
  /** What a subdivision is called in messages. */
  readonly kind: string
  readonly codes: Readonly<Record<string, string>>
  readonly byName: ReadonlyMap<string, string>
  /** A code and its name, quoted in the message that refuses an unknown subdivision. */
  readonly example: readonly [code: string, name: string]
}

// Only where tax depends on the subdivision (US states, Canadian provinces and territories): there
// every accepted spelling must resolve to one code, and anything else is refused (UNKNOWN_SUBDIVISION).
const SUBDIVISIONS: Readonly<Record<string, SubdivisionTable>> = {
  USA: {
    prefix: 'US',
    kind: 'state',
    codes: US_STATES,
    byName: indexByName(US_STATES, {
      'Washington DC': 'DC',
      'Washington D.C.': 'DC',
      'US Virgin Islands': 'VI',
      'Virgin Islands, U.S.': 'VI',
      'United States Virgin Islands': 'VI',
    }),
    example: ['NY', 'New York'],
  },
  CAN: {
    prefix: 'CA',
    kind: 'province or territory',
    codes: CA_PROVINCES,
    // The French names are official too (ISO 3166-2:CA lists both).
    byName: indexByName(CA_PROVINCES, {
      Québec: 'QC',
      Newfoundland: 'NL',
      'Yukon Territory': 'YT',
      PEI: 'PE',
      'Colombie-Britannique': 'BC',
      'Île-du-Prince-Édouard': 'PE',
      'Nouveau-Brunswick': 'NB',
      'Nouvelle-Écosse': 'NS',
      'Terre-Neuve-et-Labrador': 'NL',
      'Territoires du Nord-Ouest': 'NT',
    }),
    example: ['ON', 'Ontario'],
  },
}

/** True where tax depends on the state or province (USA and CAN): there an unknown one is refused. */
export function hasTaxedSubdivisions(countryAlpha3: string): boolean {
  return SUBDIVISIONS[countryAlpha3] !== undefined
}

/**
 * The code of a US state or Canadian province from any accepted spelling, any case, surrounding
 * spaces ignored: its ISO 3166-2 code without or with the country prefix ("ON", "CA-ON"), or its
 * name, with or without accents ("Ontario", "Québec", "new york"); French names for Canada.
 * undefined when unrecognised (or when the country has no table).
 */
function lookUpSubdivision(table: SubdivisionTable, state: string): string | undefined {
  const upper = state.trim().toUpperCase()
  const code = upper.startsWith(`${table.prefix}-`) ? upper.slice(table.prefix.length + 1) : upper
  if (/^[A-Z]{2}$/.test(code) && table.codes[code] !== undefined) return code
  return table.byName.get(nameKey(state))
}

/**
 * Normalises a consumer's or merchant's state/province for project matching (lenient).
 * - USA and CAN: any spelling of lookUpSubdivision → the upper-case code ("QC", "NY"); anything
 *   else → null (an unrecognised state is treated as absent).
 * - Other countries: the trimmed, upper-cased input, or null when absent or blank.
 * Tax never uses this: it uses subdivisionForTax, which refuses what it does not recognise.
 */
export function normaliseSubdivision(countryAlpha3: string, state: string | undefined | null): string | null {
  if (state === undefined || state === null) return null
  const trimmed = state.trim()
  if (trimmed === '') return null
  const table = SUBDIVISIONS[countryAlpha3]
  if (table === undefined) return trimmed.toUpperCase()
  return lookUpSubdivision(table, trimmed) ?? null
}

/**
 * The state/province code that tax uses (strict). USA and CAN: null when absent or blank, the code
 * for any spelling lookUpSubdivision accepts, and otherwise a DomainError UNKNOWN_SUBDIVISION at
 * `path` — never null, so an unrecognised province can never fall back to a lower rate. Other
 * countries: null (their tax does not depend on a subdivision).
 */
export function subdivisionForTax(countryAlpha3: string, state: string | undefined | null, path: string): string | null {
  const table = SUBDIVISIONS[countryAlpha3]
  if (table === undefined || state === undefined || state === null || state.trim() === '') return null
  const code = lookUpSubdivision(table, state)
  if (code !== undefined) return code
  const [exampleCode, exampleName] = table.example
  throw new DomainError(
    'UNKNOWN_SUBDIVISION',
    `unknown ${table.kind} ${JSON.stringify(state)} for ${countryAlpha3}: ` +
      `use an iso 3166-2 code (e.g. "${exampleCode}" or "${table.prefix}-${exampleCode}") or a name (e.g. "${exampleName}")`,
    path,
  )
}
