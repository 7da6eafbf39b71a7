// Tax rules (docs/pricing.md, "Tax"): which rate applies to each line of a quote in a jurisdiction on a date.
// Rates come from sales-tax's bundled JSON (read as data: its API is async, reads the clock and
// computes with floats), corrected by our dated override table. Rates are proportions, as strings.
import salesTaxRates from 'sales-tax/res/sales_tax_rates.json' with { type: 'json' }
import salesTaxRegions from 'sales-tax/res/region_countries.json' with { type: 'json' }
import salesTaxPackage from 'sales-tax/package.json' with { type: 'json' }
import type { ConsumerLocation, DecimalString, MerchantLocation, SectionTaxRates, TaxJurisdiction } from './types.js'
import { Decimal, formatRate } from './money.js'
import { DomainError } from './errors.js'
import { subdivisionForTax, toAlpha2 } from './countries.js'
import { assertIsoDate } from './dates.js'

/** The lines a quote prices, each with its own tax treatment. */
export type TaxLine = 'creditImpact' | 'contributionImpact' | 'serviceFee'

/**
 * One dated correction of the rate data. `line: 'standardRate'` replaces the sales-tax figure for
 * the country (state null) or the state/province; any other line fixes that line's final rate.
 * Valid on dates in [from, to) — `to` null means open-ended.
 */
export interface TaxOverride {
  /** ISO 3166-1 alpha-2. */
  readonly country: string
  /** Upper-case state/province code, or null for the whole country. */
  readonly state: string | null
  readonly line: TaxLine | 'standardRate'
  readonly rate: DecimalString
  readonly from: string
  readonly to: string | null
  readonly note: string
}

export interface TaxRuleSet {
  readonly version: string
  /** First date on which this rule set is meant to price quotes. Rates inside carry their own dates. */
  readonly effectiveDate: string
  /** The rate data the rules read. */
  readonly rateSource: string
  readonly overrides: readonly TaxOverride[]
}

/** UK VAT on voluntary carbon credits: standard-rated from this date (HMRC Revenue & Customs Brief 7 (2024)). */
export const GB_CARBON_CREDIT_VAT_FROM = '2024-09-01'

const TAX_OVERRIDES: readonly TaxOverride[] = [
  {
    country: 'RO',
    state: null,
    line: 'standardRate',
    rate: '0.21',
    from: '2025-08-01',
    to: null,
    note: 'Romania 21% from 1 Aug 2025; sales-tax 2.23.0 switches at 2025-08-01T21:00Z, one day late.',
  },
  {
    country: 'KW',
    state: null,
    line: 'standardRate',
    rate: '0',
    from: '2000-01-01',
    to: null,
    note: 'Kuwait has not implemented the GCC VAT framework; sales-tax 2.23.0 lists 5%.',
  },
  {
    country: 'QA',
    state: null,
    line: 'standardRate',
    rate: '0',
    from: '2000-01-01',
    to: null,
    note: 'Qatar has not implemented the GCC VAT framework; sales-tax 2.23.0 lists 5%.',
  },
  {
    country: 'BH',
    state: null,
    line: 'standardRate',
    rate: '0.1',
    from: '2022-01-01',
    to: null,
    note: 'Bahrain VAT 10% from 1 Jan 2022 (Decree-Law No. 33 of 2021); sales-tax 2.23.0 still lists 5%.',
  },
  // US service fees: 0 in every state unless listed here (per-state review; none taxes it yet).
]

/**
 * The tax rule set every quote records (version + effective date). Its version names both our rule
 * table and the sales-tax data release, so a data upgrade is visible in stored quotes.
 */
export const TAX_RULE_SET: TaxRuleSet = Object.freeze({
  version: `canopy-tax-1/sales-tax-${salesTaxPackage.version}`,
  effectiveDate: '2026-02-06',
  rateSource: `npm sales-tax ${salesTaxPackage.version} res/sales_tax_rates.json (MIT)`,
  overrides: TAX_OVERRIDES,
})

interface SalesTaxEntry {
  readonly rate: number
  readonly type?: string
  readonly before?: Readonly<Record<string, SalesTaxEntry>>
  readonly states?: Readonly<Record<string, SalesTaxEntry>>
}

const RATES = salesTaxRates as unknown as Readonly<Record<string, SalesTaxEntry>>
const EU_MEMBERS: ReadonlySet<string> = new Set(salesTaxRegions.EU)

const UTC_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
for (const [country, entry] of Object.entries(RATES)) {
  for (const scoped of [entry, ...Object.values(entry.states ?? {})]) {
    for (const instant of Object.keys(scoped.before ?? {})) {
      if (!UTC_INSTANT.test(instant)) throw new Error(`sales-tax data: bad 'before' date ${instant} (${country})`)
    }
  }
}

/**
 * The entry valid on `date`. A `before` key is the instant a change took effect; the library keys
 * them at local midnight in UTC (e.g. "2024-08-31T22:00:00.000Z" for 1 Sep in Helsinki). We compare
 * the quote date's UTC noon, so a change dated local midnight anywhere from UTC−12 to UTC+12 takes
 * effect on its local calendar date. Equal-format ISO strings compare correctly as strings.
 */
function entryOn(entry: SalesTaxEntry, date: string): SalesTaxEntry {
  const noon = `${date}T12:00:00.000Z`
  let chosen: string | undefined
  for (const instant of Object.keys(entry.before ?? {})) {
    if (noon < instant && (chosen === undefined || instant < chosen)) chosen = instant
  }
  return chosen === undefined ? entry : (entry.before?.[chosen] ?? entry)
}

// The JSON's rates are short literals (0.09975); String() returns exactly the authored decimal.
function rateOf(entry: SalesTaxEntry | undefined, date: string): Decimal {
  return entry === undefined ? new Decimal(0) : new Decimal(String(entryOn(entry, date).rate))
}

/** A rate and the rule that gave it, in words (what GET /quotes/:id/explain shows; locked in new quotes). */
export interface TaxRuleApplied {
  readonly rate: Decimal
  readonly rule: string
}

function findOverride(
  ruleSet: TaxRuleSet,
  line: TaxOverride['line'],
  country: string,
  state: string | null,
  date: string,
): TaxOverride | undefined {
  let countryWide: TaxOverride | undefined
  for (const override of ruleSet.overrides) {
    if (override.country !== country || override.line !== line) continue
    if (date < override.from || (override.to !== null && date >= override.to)) continue
    if (override.state !== null && override.state === state) return override
    if (override.state === null) countryWide ??= override
  }
  return countryWide
}

const overrideRule = (override: TaxOverride): string =>
  `override (${override.country}${override.state === null ? '' : `-${override.state}`}, from ${override.from}): ${override.note}`

/** Country-level standard rate on `date`: override, else the sales-tax figure, else 0. */
function standardRate(ruleSet: TaxRuleSet, country: string, date: string): TaxRuleApplied {
  const override = findOverride(ruleSet, 'standardRate', country, null, date)
  if (override !== undefined) return { rate: new Decimal(override.rate), rule: `standard rate of ${country}, ${overrideRule(override)}` }
  const entry = RATES[country]
  return entry === undefined
    ? { rate: new Decimal(0), rule: `no rate for ${country} in the rate data: 0` }
    : { rate: rateOf(entry, date), rule: `standard rate of ${country} in the rate data` }
}

/** State/province rate on top of the country's (Canadian PST/QST or the provincial part of HST). */
function subdivisionRate(ruleSet: TaxRuleSet, country: string, state: string, date: string): TaxRuleApplied {
  const override = ruleSet.overrides.find(
    (o) => o.line === 'standardRate' && o.country === country && o.state === state && date >= o.from && (o.to === null || date < o.to),
  )
  return override !== undefined
    ? { rate: new Decimal(override.rate), rule: overrideRule(override) }
    : { rate: rateOf(RATES[country]?.states?.[state], date), rule: `rate of ${country}-${state} in the rate data` }
}

/** The rule table (docs/pricing.md, "Tax") for one line, before line overrides. */
function ruleRate(ruleSet: TaxRuleSet, line: TaxLine, jurisdiction: TaxJurisdiction, date: string): TaxRuleApplied {
  const { country, state } = jurisdiction
  const zero = (rule: string): TaxRuleApplied => ({ rate: new Decimal(0), rule })
  if (line === 'contributionImpact') return zero('contributions are outside the scope of VAT and sales tax: 0')
  if (country === 'US') return zero('US: no sales tax on this line unless a state override says otherwise: 0')
  if (country === 'GB') {
    if (line === 'creditImpact' && date < GB_CARBON_CREDIT_VAT_FROM) {
      return zero(`GB: voluntary carbon credits outside the scope of VAT before ${GB_CARBON_CREDIT_VAT_FROM}: 0`)
    }
    return standardRate(ruleSet, country, date)
  }
  if (EU_MEMBERS.has(country)) return standardRate(ruleSet, country, date)
  if (line === 'creditImpact') return zero(`carbon credits are not taxed in ${country}: 0`)
  if (country === 'CA') {
    const gst = standardRate(ruleSet, country, date)
    if (state === null) return { rate: gst.rate, rule: `federal GST only (no province): ${gst.rule}` }
    const provincial = subdivisionRate(ruleSet, country, state, date)
    return { rate: gst.rate.plus(provincial.rate), rule: `GST + provincial tax: ${gst.rule}; plus ${provincial.rule}` }
  }
  return standardRate(ruleSet, country, date)
}

/** Rate of one line on `date`, and the rule that gave it: a line override for the state, then the country, else the rule table. */
export function taxRuleFor(line: TaxLine, jurisdiction: TaxJurisdiction, date: string, ruleSet: TaxRuleSet = TAX_RULE_SET): TaxRuleApplied {
  assertIsoDate(date)
  const override = findOverride(ruleSet, line, jurisdiction.country, jurisdiction.state, date)
  if (override !== undefined) return { rate: new Decimal(override.rate), rule: overrideRule(override) }
  return ruleRate(ruleSet, line, jurisdiction, date)
}

/** Rate of one line on `date`: a line override for the state, then the country, else the rule table. */
export function taxRateFor(line: TaxLine, jurisdiction: TaxJurisdiction, date: string, ruleSet: TaxRuleSet = TAX_RULE_SET): Decimal {
  return taxRuleFor(line, jurisdiction, date, ruleSet).rate
}

/**
 * The tax jurisdiction of a quote (docs/pricing.md, "Tax"): the consumer's country, plus the state/province
 * for the US and Canada. When a US/CA consumer gives no state, the merchant's state is used if the
 * merchant is in the same country (`basis: 'merchant'`); otherwise the state stays null (US: no
 * state tax on our lines anyway; CA: federal GST only). Countries are alpha-3 in, alpha-2 out.
 * Throws `UNKNOWN_COUNTRY` (path /consumer/countryCode) for an unknown consumer country, and
 * `UNKNOWN_SUBDIVISION` (see subdivisionForTax) for a state that would decide the tax but is not
 * recognised: a US/CA consumer's (/consumer/state), or, when that consumer gives none, the
 * same-country merchant's (/merchant/address/state). An unrecognised state never falls back to the
 * merchant's state or to the federal rate alone. A merchant state that does not decide the tax
 * (the consumer gave one, or lives in another country) is not checked here.
 */
export function resolveJurisdiction(consumer: ConsumerLocation, merchant: MerchantLocation | undefined): TaxJurisdiction {
  const country = toAlpha2(consumer.countryCode)
  if (country === undefined) {
    throw new DomainError('UNKNOWN_COUNTRY', `unknown country ${JSON.stringify(consumer.countryCode)}`, '/consumer/countryCode')
  }
  if (country !== 'US' && country !== 'CA') return { country, state: null, basis: 'consumer' }
  const consumerState = subdivisionForTax(consumer.countryCode, consumer.state, '/consumer/state')
  if (consumerState !== null) return { country, state: consumerState, basis: 'consumer' }
  if (merchant !== undefined && merchant.countryCode === consumer.countryCode) {
    const merchantState = subdivisionForTax(merchant.countryCode, merchant.state, '/merchant/address/state')
    if (merchantState !== null) return { country, state: merchantState, basis: 'merchant' }
  }
  return { country, state: null, basis: 'consumer' }
}

/**
 * The locked tax rates of both quote sections on `date` (a "YYYY-MM-DD" UTC date).
 * - credits: impactTax = carbon-credit rate, serviceFee = f, serviceFeeTax = service-fee rate;
 * - contribution: impactTax = "0" (a donation is outside the scope of VAT/sales tax), same f and
 *   service-fee rate.
 * Rates are exact decimal strings without trailing zeros ("0.2", "0.14975", "0"). `serviceFeeRate`
 * (f) is the organisation's fee as a proportion of impact and must be ≥ 0 (RangeError otherwise).
 */
export function taxRatesFor(
  jurisdiction: TaxJurisdiction,
  date: string,
  serviceFeeRate: Decimal,
  ruleSet: TaxRuleSet = TAX_RULE_SET,
): { credits: SectionTaxRates; contribution: SectionTaxRates } {
  if (!serviceFeeRate.isFinite() || (serviceFeeRate.isNegative() && !serviceFeeRate.isZero())) {
    throw new RangeError(`service fee rate must be a non-negative decimal, got ${serviceFeeRate.toString()}`)
  }
  const serviceFee = formatRate(serviceFeeRate)
  const serviceFeeTax = formatRate(taxRateFor('serviceFee', jurisdiction, date, ruleSet))
  return {
    credits: { impactTax: formatRate(taxRateFor('creditImpact', jurisdiction, date, ruleSet)), serviceFee, serviceFeeTax },
    contribution: { impactTax: formatRate(taxRateFor('contributionImpact', jurisdiction, date, ruleSet)), serviceFee, serviceFeeTax },
  }
}

/** True for the 27 EU member states (alpha-2), per sales-tax's region list. */
export function isEuMember(countryAlpha2: string): boolean {
  return EU_MEMBERS.has(countryAlpha2)
}
