// US states and Canadian provinces decide sales tax: every ISO 3166-2 spelling and name resolves to
// one code, and anything else is refused (UNKNOWN_SUBDIVISION) — never taxed at a lower rate.
import { describe, expect, it } from 'vitest'
import { hasTaxedSubdivisions, normaliseSubdivision, subdivisionForTax } from '../../../src/domain/countries.js'
import { DomainError } from '../../../src/domain/errors.js'
import { Decimal } from '../../../src/domain/money.js'
import { resolveJurisdiction, taxRatesFor } from '../../../src/domain/tax.js'

const F = new Decimal('0.2')
const DATE = '2026-02-10'

// An oracle written independently of src/domain/countries.ts: ISO 3166-2:CA and ISO 3166-2:US.
// Canada: code, English name, French name, fee tax on 2026-02-10 (GST 5% + PST/QST, or HST).
const PROVINCES: readonly [code: string, english: string, french: string, feeTax: string][] = [
  ['AB', 'Alberta', 'Alberta', '0.05'],
  ['BC', 'British Columbia', 'Colombie-Britannique', '0.12'],
  ['MB', 'Manitoba', 'Manitoba', '0.12'],
  ['NB', 'New Brunswick', 'Nouveau-Brunswick', '0.15'],
  ['NL', 'Newfoundland and Labrador', 'Terre-Neuve-et-Labrador', '0.15'],
  ['NS', 'Nova Scotia', 'Nouvelle-Écosse', '0.14'],
  ['NT', 'Northwest Territories', 'Territoires du Nord-Ouest', '0.05'],
  ['NU', 'Nunavut', 'Nunavut', '0.05'],
  ['ON', 'Ontario', 'Ontario', '0.13'],
  ['PE', 'Prince Edward Island', 'Île-du-Prince-Édouard', '0.15'],
  ['QC', 'Quebec', 'Québec', '0.14975'],
  ['SK', 'Saskatchewan', 'Saskatchewan', '0.11'],
  ['YT', 'Yukon', 'Yukon', '0.05'],
]

const STATES: readonly [code: string, name: string][] = [
  ['AL', 'Alabama'],
  ['AK', 'Alaska'],
  ['AZ', 'Arizona'],
  ['AR', 'Arkansas'],
  ['CA', 'California'],
  ['CO', 'Colorado'],
  ['CT', 'Connecticut'],
  ['DE', 'Delaware'],
  ['FL', 'Florida'],
  ['GA', 'Georgia'],
  ['HI', 'Hawaii'],
  ['ID', 'Idaho'],
  ['IL', 'Illinois'],
  ['IN', 'Indiana'],
  ['IA', 'Iowa'],
  ['KS', 'Kansas'],
  ['KY', 'Kentucky'],
  ['LA', 'Louisiana'],
  ['ME', 'Maine'],
  ['MD', 'Maryland'],
  ['MA', 'Massachusetts'],
  ['MI', 'Michigan'],
  ['MN', 'Minnesota'],
  ['MS', 'Mississippi'],
  ['MO', 'Missouri'],
  ['MT', 'Montana'],
  ['NE', 'Nebraska'],
  ['NV', 'Nevada'],
  ['NH', 'New Hampshire'],
  ['NJ', 'New Jersey'],
  ['NM', 'New Mexico'],
  ['NY', 'New York'],
  ['NC', 'North Carolina'],
  ['ND', 'North Dakota'],
  ['OH', 'Ohio'],
  ['OK', 'Oklahoma'],
  ['OR', 'Oregon'],
  ['PA', 'Pennsylvania'],
  ['RI', 'Rhode Island'],
  ['SC', 'South Carolina'],
  ['SD', 'South Dakota'],
  ['TN', 'Tennessee'],
  ['TX', 'Texas'],
  ['UT', 'Utah'],
  ['VT', 'Vermont'],
  ['VA', 'Virginia'],
  ['WA', 'Washington'],
  ['WV', 'West Virginia'],
  ['WI', 'Wisconsin'],
  ['WY', 'Wyoming'],
  ['DC', 'District of Columbia'],
  ['AS', 'American Samoa'],
  ['GU', 'Guam'],
  ['MP', 'Northern Mariana Islands'],
  ['PR', 'Puerto Rico'],
  ['UM', 'United States Minor Outlying Islands'],
  ['VI', 'U.S. Virgin Islands'],
]

/** Every spelling the API accepts for one subdivision. */
const spellings = (prefix: string, code: string, ...names: string[]): string[] => [
  code,
  code.toLowerCase(),
  `${prefix}-${code}`,
  `${prefix}-${code}`.toLowerCase(),
  ` ${prefix}-${code} `,
  ...names.flatMap((name) => [name, name.toLowerCase(), name.toUpperCase(), ` ${name} `]),
]

const canadianSpellings = PROVINCES.flatMap(([code, english, french, feeTax]) =>
  spellings('CA', code, english, french).map((spelling) => [spelling, code, feeTax] as const),
)
const usSpellings = STATES.flatMap(([code, name]) => spellings('US', code, name).map((spelling) => [spelling, code] as const))

const refusal = (path: string) => expect.objectContaining({ name: 'DomainError', code: 'UNKNOWN_SUBDIVISION', path })

describe('Canadian provinces and territories: every ISO 3166-2 spelling, English or French name', () => {
  it.each(canadianSpellings)('%j is %s and its fee is taxed at %s', (spelling, code, feeTax) => {
    expect(subdivisionForTax('CAN', spelling, '/consumer/state')).toBe(code)
    expect(normaliseSubdivision('CAN', spelling)).toBe(code)
    const jurisdiction = resolveJurisdiction({ countryCode: 'CAN', state: spelling }, undefined)
    expect(jurisdiction).toEqual({ country: 'CA', state: code, basis: 'consumer' })
    const rates = taxRatesFor(jurisdiction, DATE, F)
    expect(rates.credits.serviceFeeTax).toBe(feeTax)
    expect(rates.contribution.serviceFeeTax).toBe(feeTax)
    expect(rates.credits.impactTax).toBe('0')
  })

  it('covers all 13 provinces and territories', () => {
    expect(new Set(canadianSpellings.map(([, code]) => code)).size).toBe(13)
  })
})

describe('US states, DC and outlying areas: every ISO 3166-2 spelling and name', () => {
  it.each(usSpellings)('%j is %s', (spelling, code) => {
    expect(subdivisionForTax('USA', spelling, '/consumer/state')).toBe(code)
    expect(normaliseSubdivision('USA', spelling)).toBe(code)
    expect(resolveJurisdiction({ countryCode: 'USA', state: spelling }, undefined)).toEqual({
      country: 'US',
      state: code,
      basis: 'consumer',
    })
  })

  it('covers the 50 states, DC and the 6 outlying areas', () => {
    expect(new Set(usSpellings.map(([, code]) => code)).size).toBe(57)
  })
})

describe('Ontario: HST 13% in every accepted spelling, never GST alone', () => {
  it.each(['ON', 'on', 'CA-ON', 'ca-on', 'Ontario', 'ONTARIO', ' ontario '])('%j → 13%', (state) => {
    const jurisdiction = resolveJurisdiction({ countryCode: 'CAN', state }, { countryCode: 'CAN', state: 'AB' })
    expect(taxRatesFor(jurisdiction, DATE, F).credits.serviceFeeTax).toBe('0.13')
  })
})

describe('an unknown subdivision where tax depends on it is refused', () => {
  it.each([
    ['CAN', 'ONT'],
    ['CAN', 'XX'],
    ['CAN', 'CA-XX'],
    ['CAN', 'US-ON'],
    ['CAN', 'CA-'],
    ['CAN', 'CA_ON'],
    ['CAN', 'CAON'],
    ['CAN', 'ON-CA'],
    ['CAN', 'Ontari'],
    ['CAN', 'Atlantis'],
    ['CAN', 'CA'],
    ['CAN', 'NY'],
    ['USA', 'ZZ'],
    ['USA', 'US-ZZ'],
    ['USA', 'CA-NY'],
    ['USA', 'ON'],
    ['USA', 'Ontario'],
    ['USA', 'N.Y'],
    ['USA', 'USA'],
  ])('%s %j → UNKNOWN_SUBDIVISION at /consumer/state', (countryCode, state) => {
    expect(() => resolveJurisdiction({ countryCode, state }, undefined)).toThrow(refusal('/consumer/state'))
    // Also when the merchant (same country) has a perfectly good state: no fallback.
    const merchant = { countryCode, state: countryCode === 'CAN' ? 'ON' : 'NY' }
    expect(() => resolveJurisdiction({ countryCode, state }, merchant)).toThrow(refusal('/consumer/state'))
    // The lenient normalisation used for project matching treats it as absent.
    expect(normaliseSubdivision(countryCode, state)).toBeNull()
  })

  it('names the value, the country and the accepted forms in a lowercase sentence', () => {
    let error: unknown
    try {
      resolveJurisdiction({ countryCode: 'CAN', state: 'ONT' }, undefined)
    } catch (thrown) {
      error = thrown
    }
    expect(error).toBeInstanceOf(DomainError)
    expect((error as DomainError).message).toBe(
      'unknown province or territory "ONT" for CAN: use an iso 3166-2 code (e.g. "ON" or "CA-ON") or a name (e.g. "Ontario")',
    )
    expect(() => subdivisionForTax('USA', 'ZZ', '/x')).toThrow(
      'unknown state "ZZ" for USA: use an iso 3166-2 code (e.g. "NY" or "US-NY") or a name (e.g. "New York")',
    )
  })
})

describe('the merchant state, used when a US/CA consumer gives none', () => {
  it.each([
    ['CAN', 'ONT'],
    ['CAN', 'CA-XX'],
    ['USA', 'ZZ'],
  ])('%s merchant state %j, consumer without one → UNKNOWN_SUBDIVISION at /merchant/address/state', (countryCode, state) => {
    expect(() => resolveJurisdiction({ countryCode }, { countryCode, state })).toThrow(refusal('/merchant/address/state'))
    expect(() => resolveJurisdiction({ countryCode, state: '  ' }, { countryCode, state })).toThrow(refusal('/merchant/address/state'))
  })

  it('decides the province in any accepted spelling', () => {
    for (const state of ['ON', 'CA-ON', 'Ontario']) {
      const jurisdiction = resolveJurisdiction({ countryCode: 'CAN' }, { countryCode: 'CAN', state })
      expect(jurisdiction).toEqual({ country: 'CA', state: 'ON', basis: 'merchant' })
      expect(taxRatesFor(jurisdiction, DATE, F).credits.serviceFeeTax).toBe('0.13')
    }
  })

  it('is not checked when it does not decide the tax', () => {
    // The consumer's own province decides.
    expect(resolveJurisdiction({ countryCode: 'CAN', state: 'QC' }, { countryCode: 'CAN', state: 'ONT' })).toEqual({
      country: 'CA',
      state: 'QC',
      basis: 'consumer',
    })
    // A merchant in another country never decides a consumer's province.
    expect(resolveJurisdiction({ countryCode: 'CAN' }, { countryCode: 'USA', state: 'ZZ' })).toEqual({
      country: 'CA',
      state: null,
      basis: 'consumer',
    })
    expect(resolveJurisdiction({ countryCode: 'GBR' }, { countryCode: 'USA', state: 'ZZ' })).toEqual({
      country: 'GB',
      state: null,
      basis: 'consumer',
    })
  })

  it('a consumer and a merchant without a state: the federal rate, as before', () => {
    const jurisdiction = resolveJurisdiction({ countryCode: 'CAN' }, { countryCode: 'CAN' })
    expect(jurisdiction).toEqual({ country: 'CA', state: null, basis: 'consumer' })
    expect(taxRatesFor(jurisdiction, DATE, F).credits.serviceFeeTax).toBe('0.05')
  })
})

describe('countries whose tax does not depend on a subdivision', () => {
  it.each([
    ['GBR', 'XX'],
    ['DEU', 'Bayern'],
    ['FRA', 'ONT'],
    ['AUS', 'NSW'],
  ])('%s with state %j: accepted, the country decides', (countryCode, state) => {
    expect(hasTaxedSubdivisions(countryCode)).toBe(false)
    expect(subdivisionForTax(countryCode, state, '/consumer/state')).toBeNull()
    expect(resolveJurisdiction({ countryCode, state }, undefined).state).toBeNull()
  })

  it('only the USA and Canada have taxed subdivisions', () => {
    expect(hasTaxedSubdivisions('USA')).toBe(true)
    expect(hasTaxedSubdivisions('CAN')).toBe(true)
  })
})
