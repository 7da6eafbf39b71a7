// Spend-based footprint (docs/pricing.md, "Footprint"): factor lookup by MCC and merchant country, FX to the
// factor's base currency, price-year adjustment, then grams/ounces (carbon) or m²/ft² (nature).
import type { DeflatorBasis, EmissionFactor, FxTable, Footprint, ImpactType, LockedQuote } from './types.js'
import {
  Decimal,
  exactHalfUpClearOfTies,
  formatDecimal,
  formatMinorUnits,
  plainDecimalOf,
  pow10,
  roundHalfUp,
  type PlainDecimal,
} from './money.js'
import { convert } from './fx.js'
import { DomainError } from './errors.js'
import { yearOf } from './dates.js'
import { ANY_MCC } from './data/emission-factors.js'

export type FactorMatch = LockedQuote['provenance']['factor']['matchedBy']

/** Exact: the international avoirdupois ounce is 28.349523125 g. */
export const GRAMS_PER_OUNCE = '28.349523125'
/** Exact: 1 m² = 1 / 0.3048² ft². */
export const SQUARE_FEET_PER_SQUARE_METRE = '10.76391041670972'

/** MCC range groups (docs/pricing.md, "Footprint") and the representative MCC each one borrows its factor from. */
export const MCC_RANGE_GROUPS: readonly { readonly from: number; readonly to: number; readonly mcc: number; readonly name: string }[] = [
  { from: 3000, to: 3299, mcc: 4511, name: 'airlines' },
  { from: 3351, to: 3441, mcc: 7512, name: 'car rental' },
  { from: 3501, to: 3999, mcc: 7011, name: 'hotels' },
]

/**
 * US CPI-U annual averages (BLS CUUR0000SA0, M13), corroborated in data/SOURCES.md §1.7. Quotes dated
 * after the last verified year use that year; before the first, the first.
 */
export const US_CPI_U: Readonly<Record<number, string>> = {
  2019: '255.657',
  2020: '258.811',
  2021: '270.970',
  2022: '292.655',
  2023: '304.702',
  2024: '313.689',
}
const CPI_YEARS = Object.keys(US_CPI_U).map(Number)
const FIRST_CPI_YEAR = Math.min(...CPI_YEARS)
const LAST_CPI_YEAR = Math.max(...CPI_YEARS)

function isDefaultRow(factor: EmissionFactor): boolean {
  return factor.mccFrom <= ANY_MCC.from && factor.mccTo >= ANY_MCC.to
}

/**
 * A factor set indexed for lookup by kind and region. Building it costs a pass over every row, so callers build
 * it once per factor set (the service, when it loads the catalogue) rather than per quote.
 */
export interface FactorSet {
  /** Non-default rows by `${kind}|${region}`, in input order. */
  readonly specific: ReadonlyMap<string, readonly EmissionFactor[]>
  readonly defaults: ReadonlyMap<string, readonly EmissionFactor[]>
}

/** Indexes factors for findFactor; operator-imported rows go first, ahead of DEFAULT_EMISSION_FACTORS. */
export function indexFactors(factors: readonly EmissionFactor[]): FactorSet {
  const specific = new Map<string, EmissionFactor[]>()
  const defaults = new Map<string, EmissionFactor[]>()
  for (const factor of factors) {
    const target = isDefaultRow(factor) ? defaults : specific
    const key = `${factor.kind}|${factor.region}`
    const list = target.get(key)
    if (list === undefined) target.set(key, [factor])
    else list.push(factor)
  }
  return { specific, defaults }
}

/** The narrowest row covering `mcc`; among equally narrow rows, the earliest. */
function narrowest(rows: readonly EmissionFactor[] | undefined, mcc: number): EmissionFactor | undefined {
  let best: EmissionFactor | undefined
  for (const row of rows ?? []) {
    if (mcc < row.mccFrom || mcc > row.mccTo) continue
    if (best === undefined || row.mccTo - row.mccFrom < best.mccTo - best.mccFrom) best = row
  }
  return best
}

/** Parses a 4-digit MCC; throws `INVALID_MCC` (path /merchant/mcc) otherwise. */
export function parseMcc(mcc: string): number {
  if (!/^\d{4}$/.test(mcc)) throw new DomainError('INVALID_MCC', 'mcc must be 4 digits', '/merchant/mcc')
  return Number(mcc)
}

/**
 * Finds the factor for an MCC and merchant country (docs/pricing.md, "Footprint"), in this order:
 * 1. `mcc-country`: a row of `kind` for the merchant's country (alpha-3) whose MCC span covers `mcc`;
 * 2. `mcc-world`: the same for region WORLD;
 * 3. `mcc-range`: for airlines 3000–3299, car rental 3351–3441 and hotels 3501–3999, steps 1–2 for
 *    the representative MCC 4511, 7512 or 7011;
 * 4. `default`: a row spanning every MCC (mccFrom 0, mccTo 9999) for the country, else for WORLD.
 * Within a step, the row with the narrowest MCC span wins and, among equals, the earliest in
 * `factors`. Operator-imported rows are passed ahead of DEFAULT_EMISSION_FACTORS, so they win over a
 * default row of the same span; a broad operator range does not beat a default single-MCC row.
 * Spanning rows are only ever used in step 4. Throws `INVALID_MCC` for a malformed MCC and an Error
 * when the set has no default row for `kind` (a data error).
 */
export function findFactor(
  factors: FactorSet,
  kind: ImpactType,
  mcc: string,
  merchantCountryAlpha3: string,
): { factor: EmissionFactor; matchedBy: FactorMatch } {
  const code = parseMcc(mcc)
  const { specific, defaults } = factors
  const lookup = (target: number): EmissionFactor | undefined =>
    narrowest(specific.get(`${kind}|${merchantCountryAlpha3}`), target) ?? narrowest(specific.get(`${kind}|WORLD`), target)

  const countryRow = narrowest(specific.get(`${kind}|${merchantCountryAlpha3}`), code)
  if (countryRow !== undefined) return { factor: countryRow, matchedBy: 'mcc-country' }
  const worldRow = narrowest(specific.get(`${kind}|WORLD`), code)
  if (worldRow !== undefined) return { factor: worldRow, matchedBy: 'mcc-world' }
  const group = MCC_RANGE_GROUPS.find((range) => code >= range.from && code <= range.to)
  const groupRow = group === undefined ? undefined : lookup(group.mcc)
  if (groupRow !== undefined) return { factor: groupRow, matchedBy: 'mcc-range' }
  const fallback = defaults.get(`${kind}|${merchantCountryAlpha3}`)?.[0] ?? defaults.get(`${kind}|WORLD`)?.[0]
  if (fallback === undefined) throw new Error(`factor set has no default ${kind} row (MCC ${ANY_MCC.from}-${ANY_MCC.to}, WORLD)`)
  return { factor: fallback, matchedBy: 'default' }
}

/**
 * Price-year adjustment applied to spend already converted to the factor's base currency.
 * USD factors: CPI-U(priceYear) / CPI-U(quote year), the quote year clamped to 2019–2024 (the
 * verified CPI years), at full precision. Other base currencies (EXIOBASE EUR 2019, illustrative
 * nature factors): "1" — no HICP series is embedded, so EUR spend is used at nominal value.
 */
export function deflatorFor(factor: Pick<EmissionFactor, 'baseCurrency' | 'priceYear'>, date: string): Decimal {
  const basis = US_CPI_U[factor.priceYear]
  if (factor.baseCurrency !== 'USD' || basis === undefined) return ONE
  const year = Math.min(Math.max(yearOf(date), FIRST_CPI_YEAR), LAST_CPI_YEAR)
  return new Decimal(basis).div(US_CPI_U[year] ?? basis)
}

/** The CPI figures behind deflatorFor (null when no deflator applies): what a quote locks to explain its deflator. */
export function deflatorBasisFor(factor: Pick<EmissionFactor, 'baseCurrency' | 'priceYear'>, date: string): DeflatorBasis | null {
  const basis = US_CPI_U[factor.priceYear]
  if (factor.baseCurrency !== 'USD' || basis === undefined) return null
  const year = Math.min(Math.max(yearOf(date), FIRST_CPI_YEAR), LAST_CPI_YEAR)
  return {
    series: 'US CPI-U, annual average (BLS CUUR0000SA0)',
    priceYear: factor.priceYear,
    priceYearIndex: basis,
    year,
    yearIndex: US_CPI_U[year] ?? basis,
  }
}

const ONE = new Decimal(1)
const THOUSAND = new Decimal(1000)
// Parsed once: multiplying or dividing by the string parses it on every call (the value is the same).
const OUNCE = new Decimal(GRAMS_PER_OUNCE)
const SQUARE_FEET = new Decimal(SQUARE_FEET_PER_SQUARE_METRE)

/** value + tailpipeValue of a carbon factor, as a Decimal. */
const kgPerUnitOf = (factor: EmissionFactor): Decimal => new Decimal(factor.value).plus(factor.tailpipeValue ?? '0')

export interface FootprintInput {
  readonly kind: ImpactType
  /** Transaction amount in major units of `currencyCode`, > 0. */
  readonly amount: Decimal
  readonly currencyCode: string
  readonly mcc: string
  /** ISO 3166-1 alpha-3. */
  readonly merchantCountry: string
  /** "YYYY-MM-DD" (UTC), the quote date. */
  readonly date: string
}

export interface FootprintEstimate {
  readonly footprint: Footprint
  readonly provenance: LockedQuote['provenance']['factor']
  readonly fx: LockedQuote['provenance']['fx']
  readonly deflator: string
  readonly deflatorBasis: DeflatorBasis | null
}

/**
 * What estimateFootprint works out before it looks at the amount: the factor and its provenance, and the three
 * multipliers the spend goes through (FX rate, deflator, kg or m² per unit), as Decimals. Immutable, so quotes of
 * the same currency, MCC, merchant country and date can share one (src/domain/pricing.ts, planQuote).
 */
export interface FootprintPlan extends Omit<FootprintEstimate, 'footprint'> {
  readonly kind: ImpactType
  /** Units of the factor's base currency per unit of the amount's; null when they are the same currency. */
  readonly rate: Decimal | null
  readonly deflatorValue: Decimal
  /** Carbon: value + tailpipeValue (kg CO2e per unit of spend); nature: value (m² per unit of spend). */
  readonly perUnit: Decimal
  /**
   * rate × deflator × perUnit (× 1000 for grams) exactly, as a plain decimal: footprintOfText's integer path. Undefined
   * where a multiplier is not a plain decimal (then every quote of the plan takes Decimal's).
   */
  readonly exactMultiplier: PlainDecimal | undefined
}

/** estimateFootprint without the amount. Throws `INVALID_MCC` and `UNSUPPORTED_CURRENCY` from the lookups. */
export function planFootprint(input: Omit<FootprintInput, 'amount'>, factors: FactorSet, fx: FxTable): FootprintPlan {
  const { factor, matchedBy } = findFactor(factors, input.kind, input.mcc, input.merchantCountry)
  // convert(1, …) is the cross rate itself (1 × rate is exact), and throws exactly as converting the amount would.
  const conversion = convert(ONE, input.currencyCode, factor.baseCurrency, fx)
  const deflator = deflatorFor(factor, input.date)
  const rate = input.currencyCode === factor.baseCurrency ? null : conversion.amount
  const perUnit = input.kind === 'carbon' ? kgPerUnitOf(factor) : new Decimal(factor.value)
  return {
    kind: input.kind,
    rate,
    deflatorValue: deflator,
    perUnit,
    exactMultiplier: exactProductOf([rate ?? ONE, deflator, perUnit, input.kind === 'carbon' ? THOUSAND : ONE]),
    provenance: {
      id: factor.id,
      source: factor.source,
      version: factor.version,
      region: factor.region,
      mcc: input.mcc,
      matchedBy,
      value: factor.value,
      ...(factor.tailpipeValue === undefined ? {} : { tailpipeValue: factor.tailpipeValue }),
      baseCurrency: factor.baseCurrency,
      priceYear: factor.priceYear,
    },
    fx: { from: input.currencyCode, to: factor.baseCurrency, rate: conversion.rate, date: fx.date, source: fx.source },
    deflator: deflator.toString(),
    deflatorBasis: deflatorBasisFor(factor, input.date),
  }
}

/** The footprint of `amount` (major units, > 0) by a plan: the same operations, in the same order, as estimateFootprint. */
export function footprintOf(plan: FootprintPlan, amount: Decimal): Footprint {
  const converted = plan.rate === null ? amount : amount.times(plan.rate)
  const spend = converted.times(plan.deflatorValue)
  if (plan.kind === 'carbon') {
    const grams = spend.times(plan.perUnit).times(THOUSAND)
    return {
      kind: 'carbon',
      co2eGrams: formatDecimal(roundHalfUp(grams, 1), 1),
      co2eOunces: formatDecimal(roundHalfUp(grams.div(OUNCE), 2), 2),
    }
  }
  const squareMetres = spend.times(plan.perUnit)
  return {
    kind: 'nature',
    areaSquareMetres: formatDecimal(roundHalfUp(squareMetres, 2), 2),
    areaSquareFeet: formatDecimal(roundHalfUp(squareMetres.times(SQUARE_FEET), 2), 2),
  }
}

/** The exact product of some Decimals as a plain decimal; undefined if one is negative or not finite. */
function exactProductOf(factors: readonly Decimal[]): PlainDecimal | undefined {
  let units = 1n
  let scale = 0
  for (const factor of factors) {
    const plain = plainDecimalOf(factor.toFixed())
    if (plain === undefined) return undefined
    units *= plain.units
    scale += plain.scale
  }
  return { units, scale }
}

const OUNCE_PLAIN = plainDecimalOf(GRAMS_PER_OUNCE) as PlainDecimal
const SQUARE_FEET_PLAIN = plainDecimalOf(SQUARE_FEET_PER_SQUARE_METRE) as PlainDecimal

/**
 * footprintOf for an amount written as text (the request's): the same figures, in integer arithmetic where that is
 * proven to give them. footprintOf's Decimal computation rounds each of its 4 operations (× rate, × deflator,
 * × perUnit, × 1000 or ÷ nothing) to 50 significant digits, and one more for the ounces' and square feet's
 * conversion, so its figure is within 10^-49 per operation (relatively) of the exact product: rounded to the
 * figure's places it gives what the exact product gives unless that lies as close as that to a tie, which
 * exactHalfUpClearOfTies checks (then, or for an amount that is not a plain decimal, Decimal's path). A property test
 * compares both paths (test/unit/domain/footprint.test.ts).
 */
export function footprintOfText(plan: FootprintPlan, amount: string): Footprint {
  const plain = plainDecimalOf(amount)
  const multiplier = plan.exactMultiplier
  const exact = plain && multiplier && exactFootprint(plan.kind, plain.units * multiplier.units, plain.scale + multiplier.scale)
  return exact ?? footprintOf(plan, new Decimal(amount.trim()))
}

/** The footprint of units / 10^scale (grams, or m²) rounded as footprintOf does, where proven equal; else undefined. */
function exactFootprint(kind: ImpactType, units: bigint, scale: number): Footprint | undefined {
  const denominator = pow10(scale)
  if (kind === 'carbon') {
    // Grams: 4 operations (+1); ounces: grams ÷ 28.349523125, one more.
    const grams = exactHalfUpClearOfTies(units, denominator, 1, 5)
    const ounces = exactHalfUpClearOfTies(units * pow10(OUNCE_PLAIN.scale), denominator * OUNCE_PLAIN.units, 2, 6)
    if (grams === undefined || ounces === undefined) return undefined
    return { kind: 'carbon', co2eGrams: formatMinorUnits(grams, 1), co2eOunces: formatMinorUnits(ounces, 2) }
  }
  const squareMetres = exactHalfUpClearOfTies(units, denominator, 2, 5)
  const squareFeet = exactHalfUpClearOfTies(units * SQUARE_FEET_PLAIN.units, denominator * pow10(SQUARE_FEET_PLAIN.scale), 2, 6)
  if (squareMetres === undefined || squareFeet === undefined) return undefined
  return { kind: 'nature', areaSquareMetres: formatMinorUnits(squareMetres, 2), areaSquareFeet: formatMinorUnits(squareFeet, 2) }
}

/**
 * Estimates a transaction's footprint:
 * spend = amount × fx(currency → factor base) × deflator, then
 * - carbon: kg CO2e = spend × (value + tailpipeValue); `co2eGrams` = kg × 1000 rounded half-up to
 *   1 dp; `co2eOunces` = unrounded grams / 28.349523125, half-up to 2 dp;
 * - nature: m² = spend × value, half-up to 2 dp; ft² = unrounded m² × 10.76391041670972, 2 dp.
 * No other rounding happens. Returns the provenance a quote locks (factor, FX rate and date,
 * deflator). Throws `INVALID_MCC` and `UNSUPPORTED_CURRENCY` from the lookups.
 */
export function estimateFootprint(input: FootprintInput, factors: FactorSet, fx: FxTable): FootprintEstimate {
  const plan = planFootprint(input, factors, fx)
  const { provenance, deflator, deflatorBasis } = plan
  return { footprint: footprintOf(plan, input.amount), provenance, fx: plan.fx, deflator, deflatorBasis }
}
