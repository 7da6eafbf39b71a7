// Country codes (ISO 3166-1) and first-level subdivisions where tax or project matching needs them.
// Only i18n-iso-countries' code tables are loaded (index.js), not its 78 language files.
import countries from 'i18n-iso-countries/index.js'

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

const SUBDIVISIONS: Readonly<Record<string, { codes: Readonly<Record<string, string>>; byName: ReadonlyMap<string, string> }>> = {
  USA: {
    codes: US_STATES,
    byName: indexByName(US_STATES, { 'Washington DC': 'DC', 'Washington D.C.': 'DC', 'US Virgin Islands': 'VI' }),
  },
  CAN: {
    codes: CA_PROVINCES,
    byName: indexByName(CA_PROVINCES, { Québec: 'QC', Newfoundland: 'NL', 'Yukon Territory': 'YT', PEI: 'PE' }),
  },
}

/**
 * Normalises a consumer's or merchant's state/province for tax and project matching.
 * - USA and CAN: a 2-letter code in any case ("qc") or the English name in any case, with or
 *   without accents ("Québec", "new york") → the upper-case postal code ("QC", "NY"); anything
 *   else → null (an unrecognised state is treated as absent).
 * - Other countries: the trimmed, upper-cased input, or null when absent or blank.
 */
export function normaliseSubdivision(countryAlpha3: string, state: string | undefined | null): string | null {
  if (state === undefined || state === null) return null
  const trimmed = state.trim()
  if (trimmed === '') return null
  const table = SUBDIVISIONS[countryAlpha3]
  if (table === undefined) return trimmed.toUpperCase()
  const upper = trimmed.toUpperCase()
  if (/^[A-Z]{2}$/.test(upper) && table.codes[upper] !== undefined) return upper
  return table.byName.get(nameKey(trimmed)) ?? null
}
