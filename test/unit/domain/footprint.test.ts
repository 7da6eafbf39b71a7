import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Decimal, formatMinorUnits } from '../../../src/domain/money.js'
import { REFERENCE_FX_RATES } from '../../../src/domain/fx.js'
import { ANY_MCC, DEFAULT_EMISSION_FACTORS, DEFAULT_FACTOR_MCCS } from '../../../src/domain/data/emission-factors.js'
import {
  deflatorFor,
  estimateFootprint,
  findFactor as findIn,
  footprintOf,
  footprintOfText,
  indexFactors,
  planFootprint,
} from '../../../src/domain/footprint.js'
import type { FootprintInput } from '../../../src/domain/footprint.js'
import type { EmissionFactor, FxTable } from '../../../src/domain/types.js'

/** findFactor over a plain list of rows (indexed on each call: fine in tests). */
const findFactor = (factors: readonly EmissionFactor[], ...rest: ['carbon' | 'nature', string, string]) =>
  findIn(indexFactors(factors), ...rest)

const estimate = (input: Partial<FootprintInput> & Pick<FootprintInput, 'amount'>) =>
  estimateFootprint(
    { kind: 'carbon', currencyCode: 'GBP', mcc: '5992', merchantCountry: 'GBR', date: '2026-02-10', ...input },
    indexFactors(DEFAULT_EMISSION_FACTORS),
    REFERENCE_FX_RATES,
  )

describe('DEFAULT_EMISSION_FACTORS', () => {
  it('covers the 41 common MCCs of data/SOURCES.md §1.3 for USA and WORLD (USEEIO) and GBR/DEU/FRA (EXIOBASE)', () => {
    expect(DEFAULT_FACTOR_MCCS).toHaveLength(41)
    for (const mcc of DEFAULT_FACTOR_MCCS) {
      for (const region of ['USA', 'WORLD', 'GBR', 'DEU', 'FRA']) {
        const rows = DEFAULT_EMISSION_FACTORS.filter(
          (f) => f.kind === 'carbon' && f.mccFrom === mcc && f.mccTo === mcc && f.region === region,
        )
        expect(rows, `${mcc} ${region}`).toHaveLength(1)
      }
      expect(
        DEFAULT_EMISSION_FACTORS.filter((f) => f.kind === 'nature' && f.mccFrom === mcc),
        `nature ${mcc}`,
      ).toHaveLength(1)
    }
  })

  it('gives every row a unique id, provenance, unit basis and a positive decimal value', () => {
    const ids = new Set(DEFAULT_EMISSION_FACTORS.map((f) => f.id))
    expect(ids.size).toBe(DEFAULT_EMISSION_FACTORS.length)
    for (const factor of DEFAULT_EMISSION_FACTORS) {
      expect(factor.source).not.toBe('')
      expect(factor.version).not.toBe('')
      expect(factor.licence).not.toBe('')
      expect(['USD', 'EUR']).toContain(factor.baseCurrency)
      expect(new Decimal(factor.value).greaterThan(0)).toBe(true)
      expect(factor.value).toMatch(/^\d+\.\d+$/)
    }
  })

  it('has tailpipe CO2 on the fuel MCCs only', () => {
    const withTailpipe = DEFAULT_EMISSION_FACTORS.filter((f) => f.tailpipeValue !== undefined)
    expect(new Set(withTailpipe.map((f) => f.mccFrom))).toEqual(new Set([5541, 5542]))
  })

  it('has default rows (MCC 0–9999) for carbon WORLD, GBR, DEU, FRA and nature WORLD', () => {
    const defaults = DEFAULT_EMISSION_FACTORS.filter((f) => f.mccFrom === ANY_MCC.from && f.mccTo === ANY_MCC.to)
    expect(defaults.map((f) => `${f.kind}:${f.region}:${f.value}`).sort()).toEqual([
      'carbon:DEU:0.241',
      'carbon:FRA:0.148',
      'carbon:GBR:0.196',
      'carbon:WORLD:0.173',
      'nature:WORLD:0.10',
    ])
  })
})

describe('findFactor: lookup order of docs/pricing.md', () => {
  it.each([
    ['5992', 'GBR', 'exiobase-memobank-2019-5992-GBR', 'mcc-country'],
    ['5812', 'USA', 'useeio-1.3-5812-USA', 'mcc-country'],
    ['5812', 'ITA', 'useeio-1.3-5812-WORLD', 'mcc-world'],
    ['3000', 'USA', 'useeio-1.3-4511-USA', 'mcc-range'],
    ['3299', 'DEU', 'exiobase-memobank-2019-4511-DEU', 'mcc-range'],
    ['3351', 'JPN', 'useeio-1.3-7512-WORLD', 'mcc-range'],
    ['3441', 'FRA', 'exiobase-memobank-2019-7512-FRA', 'mcc-range'],
    ['3501', 'GBR', 'exiobase-memobank-2019-7011-GBR', 'mcc-range'],
    ['3999', 'AUS', 'useeio-1.3-7011-WORLD', 'mcc-range'],
    ['3300', 'USA', 'useeio-1.3-default-WORLD', 'default'],
    ['3450', 'GBR', 'exiobase-memobank-2019-default-GBR', 'default'],
    ['0742', 'BRA', 'useeio-1.3-default-WORLD', 'default'],
    ['5094', 'FRA', 'exiobase-memobank-2019-default-FRA', 'default'],
  ])('carbon MCC %s in %s → %s (%s)', (mcc, country, id, matchedBy) => {
    const { factor, matchedBy: how } = findFactor(DEFAULT_EMISSION_FACTORS, 'carbon', mcc, country)
    expect(factor.id).toBe(id)
    expect(how).toBe(matchedBy)
  })

  it.each([
    ['5992', 'GBR', 'nature-illustrative-0.1-5992-WORLD', 'mcc-world'],
    ['3005', 'USA', 'nature-illustrative-0.1-4511-WORLD', 'mcc-range'],
    ['1234', 'DEU', 'nature-illustrative-0.1-default-WORLD', 'default'],
  ])('nature MCC %s in %s → %s (%s)', (mcc, country, id, matchedBy) => {
    expect(findFactor(DEFAULT_EMISSION_FACTORS, 'nature', mcc, country)).toMatchObject({ factor: { id }, matchedBy })
  })

  const operator = (overrides: Partial<EmissionFactor> & Pick<EmissionFactor, 'id'>): EmissionFactor => ({
    kind: 'carbon',
    mccFrom: 5992,
    mccTo: 5992,
    region: 'GBR',
    value: '0.5',
    baseCurrency: 'GBP',
    priceYear: 2024,
    source: 'operator',
    version: '1',
    licence: 'proprietary',
    ...overrides,
  })

  it('prefers earlier rows of the same span, so operator rows passed first override defaults', () => {
    const factors = [operator({ id: 'op-5992-GBR' }), ...DEFAULT_EMISSION_FACTORS]
    expect(findFactor(factors, 'carbon', '5992', 'GBR')).toMatchObject({ factor: { id: 'op-5992-GBR' }, matchedBy: 'mcc-country' })
  })

  it('prefers the narrowest MCC span over an earlier broad range', () => {
    const factors = [operator({ id: 'op-retail-GBR', mccFrom: 5000, mccTo: 5999 }), ...DEFAULT_EMISSION_FACTORS]
    expect(findFactor(factors, 'carbon', '5992', 'GBR').factor.id).toBe('exiobase-memobank-2019-5992-GBR')
    expect(findFactor(factors, 'carbon', '5094', 'GBR')).toMatchObject({ factor: { id: 'op-retail-GBR' }, matchedBy: 'mcc-country' })
  })

  it('matches an operator range over an airline MCC directly, before the range-group mapping', () => {
    const factors = [operator({ id: 'op-airlines-GBR', mccFrom: 3000, mccTo: 3299 }), ...DEFAULT_EMISSION_FACTORS]
    expect(findFactor(factors, 'carbon', '3100', 'GBR')).toMatchObject({ factor: { id: 'op-airlines-GBR' }, matchedBy: 'mcc-country' })
  })

  it('uses spanning rows only as the last resort, even when passed first', () => {
    const factors = [operator({ id: 'op-default-GBR', mccFrom: 0, mccTo: 9999 }), ...DEFAULT_EMISSION_FACTORS]
    expect(findFactor(factors, 'carbon', '3100', 'GBR')).toMatchObject({
      factor: { id: 'exiobase-memobank-2019-4511-GBR' },
      matchedBy: 'mcc-range',
    })
    expect(findFactor(factors, 'carbon', '5094', 'GBR')).toMatchObject({ factor: { id: 'op-default-GBR' }, matchedBy: 'default' })
  })

  it.each(['599', '59920', 'abcd', ''])('rejects MCC %j as INVALID_MCC', (mcc) => {
    expect(() => findFactor(DEFAULT_EMISSION_FACTORS, 'carbon', mcc, 'GBR')).toThrow(
      expect.objectContaining({ code: 'INVALID_MCC', path: '/merchant/mcc' }),
    )
  })

  it('fails loudly when a factor set has no default row', () => {
    expect(() => findFactor([operator({ id: 'only' })], 'carbon', '5812', 'GBR')).toThrow(/no default carbon row/)
  })
})

describe('deflatorFor (US CPI-U, 2022 USD)', () => {
  it.each([
    ['2022-06-01', '1'],
    // 292.655 / 313.689 — the reference's "$100 in 2024 → $93.29 (2022 USD)"
    ['2024-06-01', '0.93294632581952188313903260873030294336109968790745'],
    ['2026-02-10', '0.93294632581952188313903260873030294336109968790745'],
    ['2023-01-01', new Decimal('292.655').div('304.702').toString()],
    // before the first verified year, 2019's CPI is used
    ['2010-01-01', new Decimal('292.655').div('255.657').toString()],
  ])('on %s is %s', (date, expected) => {
    expect(deflatorFor({ baseCurrency: 'USD', priceYear: 2022 }, date).toString()).toBe(expected)
  })

  it('is 1 for EUR (EXIOBASE 2019) factors: no HICP series is embedded', () => {
    expect(deflatorFor({ baseCurrency: 'EUR', priceYear: 2019 }, '2026-02-10').toString()).toBe('1')
  })
})

describe('estimateFootprint: hand-worked examples', () => {
  it('GBP 47.97 at a London florist (MCC 5992, GBR)', () => {
    // Factor: EXIOBASE/Memo Bank 5992 × GBR = 0.196 kg CO2e per EUR (2019), no deflation.
    // FX: GBP → EUR = 1 / 0.86790 (ECB 2026-02-06) = 1.15220647540…
    // Spend: 47.97 / 0.86790 = 55.2713446 EUR
    // kg: 55.2713446 × 0.196 = 10.8331835 → 10,833.1835 g → 10833.2 g (1 dp)
    // oz: 10,833.1835 / 28.349523125 = 382.1293 → 382.13
    const result = estimate({ amount: new Decimal('47.97') })
    expect(result.footprint).toEqual({ kind: 'carbon', co2eGrams: '10833.2', co2eOunces: '382.13' })
    expect(result.provenance).toMatchObject({
      id: 'exiobase-memobank-2019-5992-GBR',
      region: 'GBR',
      mcc: '5992',
      matchedBy: 'mcc-country',
      value: '0.196',
      baseCurrency: 'EUR',
      priceYear: 2019,
    })
    expect(result.fx).toMatchObject({ from: 'GBP', to: 'EUR', date: '2026-02-06' })
    expect(result.fx.rate.startsWith('1.152206475400391750')).toBe(true)
    expect(result.deflator).toBe('1')
  })

  it('USD 100 at a US restaurant (MCC 5812, USA) in 2024', () => {
    // Factor: USEEIO v1.3 722511 = 0.194 kg CO2e per 2022 USD. No FX (USD → USD).
    // Deflator: CPI 2022 / CPI 2024 = 292.655 / 313.689 → $100 = $93.2946 (2022)
    // kg: 93.2946 × 0.194 = 18.0992 → 18,099.2 g (the reference: "18.1 kg"); oz: 18,099.16 / 28.3495 = 638.43
    const result = estimate({ amount: new Decimal('100'), currencyCode: 'USD', mcc: '5812', merchantCountry: 'USA', date: '2024-06-01' })
    expect(result.footprint).toEqual({ kind: 'carbon', co2eGrams: '18099.2', co2eOunces: '638.43' })
    expect(result.fx).toMatchObject({ from: 'USD', to: 'USD', rate: '1' })
    expect(result.provenance).toMatchObject({ id: 'useeio-1.3-5812-USA', priceYear: 2022, baseCurrency: 'USD' })
  })

  it('JPY 10,000 at a Japanese supermarket (MCC 5411, JPN → WORLD proxy)', () => {
    // Factor: USEEIO 311999 = 0.401 kg per 2022 USD (WORLD proxy). FX JPY → USD = 1.1794 / 185.27.
    // 10,000 × 0.0063658444 = 63.658444 USD; × 0.9329463 (CPI 2022/2024, 2026 clamps to 2024) = 59.389912
    // kg: 59.389912 × 0.401 = 23.8153546 → 23,815.4 g; oz: 23,815.35 / 28.3495 = 840.06
    const result = estimate({ amount: new Decimal('10000'), currencyCode: 'JPY', mcc: '5411', merchantCountry: 'JPN' })
    expect(result.footprint).toEqual({ kind: 'carbon', co2eGrams: '23815.4', co2eOunces: '840.06' })
    expect(result.provenance.matchedBy).toBe('mcc-world')
  })

  it('KWD 12.345 at a Kuwaiti restaurant (MCC 5812, KWT → WORLD proxy)', () => {
    // FX KWD → USD = 1.1794 / (0.307 × 1.1794) = 1 / 0.307 = 3.2573290 (indicative rate)
    // 12.345 × 3.2573290 = 40.211726 USD; × 0.9329463 = 37.515382 (2022 USD)
    // kg: 37.515382 × 0.194 = 7.2779842 → 7,278.0 g; oz: 7,277.98 / 28.3495 = 256.72
    const result = estimate({ amount: new Decimal('12.345'), currencyCode: 'KWD', mcc: '5812', merchantCountry: 'KWT' })
    expect(result.footprint).toEqual({ kind: 'carbon', co2eGrams: '7278.0', co2eOunces: '256.72' })
  })

  it('EUR 60 of fuel in Germany (MCC 5541): upstream EXIOBASE plus tailpipe CO2', () => {
    // (0.326 upstream + 1.5651 tailpipe at EUR 1.50/l) × 60 = 1.8911 × 60 = 113.466 kg → 113,466.0 g
    const result = estimate({ amount: new Decimal('60'), currencyCode: 'EUR', mcc: '5541', merchantCountry: 'DEU' })
    expect(result.footprint).toMatchObject({ co2eGrams: '113466.0' })
    expect(result.provenance).toMatchObject({ value: '0.326', tailpipeValue: '1.5651' })
  })

  it('USD 50 of fuel in the US in 2022 (MCC 5542): USEEIO plus tailpipe', () => {
    // (0.27 + 2.2499 (8.887 kg/gal ÷ $3.95/gal)) × 50 = 2.5199 × 50 = 125.995 kg → 125,995.0 g ≈ 14.2 gal burnt
    const result = estimate({ amount: new Decimal('50'), currencyCode: 'USD', mcc: '5542', merchantCountry: 'USA', date: '2022-07-01' })
    expect(result.footprint).toMatchObject({ co2eGrams: '125995.0' })
  })

  it('a nature footprint: m² and ft² from the illustrative factor', () => {
    // 47.97 GBP = 55.2713446 EUR × 0.40 m²/EUR (florists) = 22.1085 m² → 22.11; × 10.76391 = 237.97 ft²
    const result = estimate({ kind: 'nature', amount: new Decimal('47.97') })
    expect(result.footprint).toEqual({ kind: 'nature', areaSquareMetres: '22.11', areaSquareFeet: '237.97' })
    expect(result.provenance.id).toBe('nature-illustrative-0.1-5992-WORLD')
  })

  it('rounds tiny footprints to 0.0 g without a negative zero', () => {
    const result = estimate({ amount: new Decimal('1'), currencyCode: 'JPY', mcc: '8398', merchantCountry: 'USA', date: '2022-01-01' })
    // 1 JPY ≈ 0.0063658 USD × 0.059 kg = 0.3756 g
    expect(result.footprint).toEqual({ kind: 'carbon', co2eGrams: '0.4', co2eOunces: '0.01' })
  })
})

describe('footprintOfText: the integer path gives what Decimal gives', () => {
  // A plan of random figures: FX rates of up to 12 significant digits (their cross rate is a 50-digit quotient),
  // a factor of a USD price year (a 50-digit deflator) or EUR (none), a factor value and a tailpipe.
  const decimalText = (maxDigits: number, maxScale: number) =>
    fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** BigInt(maxDigits) - 1n }), fc.integer({ min: 0, max: maxScale }))
      .map(([units, scale]) => formatMinorUnits(units, scale))
  const arbitraryPlan = fc
    .record({
      kind: fc.constantFrom('carbon' as const, 'nature' as const),
      currencyCode: fc.constantFrom('GBP', 'EUR', 'USD', 'JPY'),
      baseCurrency: fc.constantFrom('USD', 'EUR'),
      priceYear: fc.constantFrom(2019, 2021, 2024),
      date: fc.constantFrom('2020-05-01', '2023-01-31', '2026-02-10'),
      value: decimalText(6, 6),
      tailpipeValue: fc.option(decimalText(4, 5), { nil: undefined }),
      rates: fc.record({ GBP: decimalText(12, 8), USD: decimalText(12, 8), JPY: decimalText(12, 6) }),
    })
    .map(({ kind, currencyCode, baseCurrency, priceYear, date, value, tailpipeValue, rates }) => {
      const factor: EmissionFactor = {
        id: 'f1',
        kind,
        mccFrom: ANY_MCC.from,
        mccTo: ANY_MCC.to,
        region: 'WORLD',
        value,
        ...(kind === 'carbon' && tailpipeValue !== undefined ? { tailpipeValue } : {}),
        baseCurrency,
        priceYear,
        source: 'test',
        version: '1',
        licence: 'test',
      }
      const fx: FxTable = { base: 'EUR', date: '2026-01-02', source: 'test', rates: { EUR: '1', ...rates } }
      return planFootprint({ kind, currencyCode, mcc: '5992', merchantCountry: 'GBR', date }, indexFactors([factor]), fx)
    })
  const arbitraryAmount = fc
    .tuple(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 0, max: 3 }))
    .map(([units, scale]) => formatMinorUnits(units, scale))

  it('for random plans and amounts', () => {
    fc.assert(
      fc.property(arbitraryPlan, arbitraryAmount, (plan, amount) => {
        expect(footprintOfText(plan, amount)).toEqual(footprintOf(plan, new Decimal(amount)))
      }),
      { numRuns: 5_000 },
    )
  })

  it('for amounts whose exact footprint is a tie, where it takes Decimal', () => {
    // 0.1 g per EUR, no FX, no deflator: amounts of 10k + 0.5 EUR put the grams on a tie of the first decimal.
    const row = DEFAULT_EMISSION_FACTORS.find((f) => f.kind === 'carbon' && f.mccFrom === ANY_MCC.from) as EmissionFactor
    const plan = planFootprint(
      { kind: 'carbon', currencyCode: 'EUR', mcc: '5992', merchantCountry: 'GBR', date: '2026-02-10' },
      indexFactors([{ ...row, baseCurrency: 'EUR', value: '0.0001' }]),
      REFERENCE_FX_RATES,
    )
    for (const amount of ['0.5', '7.5', '1234.5', '0.25', '3']) {
      expect(footprintOfText(plan, amount)).toEqual(footprintOf(plan, new Decimal(amount)))
    }
    expect(footprintOfText(plan, '7.5')).toEqual({ kind: 'carbon', co2eGrams: '0.8', co2eOunces: '0.03' })
  })

  it('answers the same through priceQuote for every plan of the default factors', () => {
    for (const currencyCode of ['GBP', 'EUR', 'USD', 'SEK']) {
      for (const mcc of ['5992', '5541', '4511', '0742']) {
        const plan = planFootprint(
          { kind: 'carbon', currencyCode, mcc, merchantCountry: 'USA', date: '2026-02-10' },
          indexFactors(DEFAULT_EMISSION_FACTORS),
          REFERENCE_FX_RATES,
        )
        for (const amount of ['0.01', '1', '47.97', '1234.56', '99999999.99']) {
          expect(footprintOfText(plan, amount)).toEqual(footprintOf(plan, new Decimal(amount)))
        }
      }
    }
  })
})
