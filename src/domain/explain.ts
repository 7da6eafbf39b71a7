// Where every figure of a stored quote came from (GET /quotes/:id/explain, docs/pricing.md "Explaining a quote"):
// read only from what the quote locked — the factor, FX rates, deflator, tax rules, project prices and weights, the
// rates and the amounts — never from today's tables. The arithmetic between locked figures is shown step by step
// (spend, grams, tonnes, D, the exact total before rounding), so that the amounts can be recomputed from the
// explanation alone. A quote priced before a part was locked says what it lacks in `missing`.
import type { DeflatorBasis, LockedQuote, TaxJurisdiction, TaxRateApplied } from './types.js'
import { Decimal } from './money.js'
import { displayRatesOf, grossFactorOf, splitWeightsOf } from './pricing.js'
import { GRAMS_PER_OUNCE, SQUARE_FEET_PER_SQUARE_METRE } from './footprint.js'
import {
  CAR_GRAMS_PER_KM,
  CAR_GRAMS_PER_MILE,
  DAYS_PER_10_YEARS,
  PARKING_SPACE_SQUARE_METRES,
  PHONE_GRAMS_PER_CHARGE,
  TENNIS_COURT_SQUARE_METRES,
  TREE_GRAMS_PER_10_YEARS,
} from './equivalents.js'

/** What an explanation reads: the stored quote's identity, its request's amount and merchant, and what it locked. */
export interface ExplainSource {
  readonly quoteId: string
  readonly createdAt: Date
  readonly transaction: { readonly amount: number; readonly currencyCode: string }
  /** The request's merchant country, when it named a merchant (else the organisation's, locked in new quotes). */
  readonly requestMerchantCountryCode: string | null
  readonly locked: LockedQuote
}

export interface ExplainedTaxLine {
  readonly rate: string
  /** The rule that gave the rate, in words; null for quotes priced before rules were locked. */
  readonly rule: string | null
}

export interface ExplainedSection {
  readonly taxRates: { readonly impactTax: string; readonly serviceFee: string; readonly serviceFeeTax: string }
  /** D = 1 + impactTax + serviceFee × (1 + serviceFeeTax): what is paid per unit of impact. */
  readonly grossFactor: string
  /** [1, impactTax, serviceFee, serviceFee × serviceFeeTax]: every amount is split by these exact weights. */
  readonly splitWeights: readonly string[]
  /** The weights ÷ D shown to 10 decimals (largest remainder, so they sum to exactly 1). */
  readonly effectiveRates: {
    readonly impact: string
    readonly impactTax: string
    readonly serviceFee: string
    readonly serviceFeeTax: string
  }
}

export interface ExplainedProject {
  readonly id: string
  readonly name: string
  readonly impactPartnerId: string
  readonly catalogue: { readonly price: string; readonly currencyCode: string }
  /** catalogue currency → quote currency; null for quotes priced before it was locked. */
  readonly fx: { readonly rate: string; readonly date: string; readonly source: string } | null
  /** catalogue price × fx.rate, rounded half-up to the quote currency's minor units. */
  readonly unitPrice: string
  readonly weight: string
  readonly weightShare: string
}

export interface QuoteExplanation {
  readonly quoteId: string
  readonly createdAt: string
  /** The UTC date the quote was priced on: the date of its tax rates and of its CPI year. */
  readonly quoteDate: string
  readonly impactType: 'carbon' | 'nature'
  readonly currencyCode: string
  readonly minorUnits: number
  /** What this quote did not lock (quotes priced before GET /quotes/:id/explain): each in words. Empty when complete. */
  readonly missing: readonly string[]
  readonly transaction: { readonly amount: string; readonly currencyCode: string }
  readonly footprint: {
    readonly mcc: string
    /** The merchant country the factor was looked up for; null when the quote did not lock it. */
    readonly merchantCountryCode: string | null
    readonly factor: {
      readonly id: string
      readonly source: string
      readonly version: string
      readonly region: string
      readonly matchedBy: string
      readonly value: string
      readonly tailpipeValue: string | null
      readonly unit: string
      readonly baseCurrency: string
      readonly priceYear: number
    }
    readonly fx: { readonly from: string; readonly to: string; readonly rate: string; readonly date: string; readonly source: string }
    readonly deflator: { readonly value: string; readonly basis: DeflatorBasis | null; readonly rule: string }
    /** amount × fx.rate × deflator, exact: the spend in the factor's base currency at its price year. */
    readonly spend: string
    readonly result:
      | { readonly kind: 'carbon'; readonly gramsExact: string; readonly co2eGrams: string; readonly co2eOunces: string }
      | { readonly kind: 'nature'; readonly squareMetresExact: string; readonly areaSquareMetres: string; readonly areaSquareFeet: string }
    readonly equivalents: readonly { readonly key: string; readonly value: number; readonly basis: string }[]
  }
  readonly tax: {
    readonly ruleSetVersion: string
    readonly effectiveDate: string
    readonly rateSource: string | null
    readonly jurisdiction: TaxJurisdiction
    readonly creditImpact: ExplainedTaxLine
    readonly contributionImpact: ExplainedTaxLine
    readonly serviceFee: ExplainedTaxLine
  }
  readonly credits: {
    readonly projects: readonly ExplainedProject[]
    /** Σ weight × catalogue price × fx.rate / Σ weight, exact (null when the project rates were not locked). */
    readonly unitPriceExact: string | null
    readonly unitPrice: string
    /** co2eGrams ÷ 1,000,000. */
    readonly tonnes: string
    readonly section: ExplainedSection
    /** tonnes × unitPrice × D, before rounding. */
    readonly totalExact: string
    readonly amounts: {
      readonly total: string
      readonly impact: string
      readonly impactTax: string
      readonly serviceFee: string
      readonly serviceFeeTax: string
    }
  } | null
  readonly contribution: ExplainedSection & { readonly impactPartnerIds: readonly string[] }
  /** Every rounding the quote made, in order. */
  readonly rounding: readonly { readonly figure: string; readonly rule: string }[]
}

const rulesOf = (
  section: NonNullable<LockedQuote['provenance']['tax']['lines']> | undefined,
  rates: { creditImpact: string; contributionImpact: string; serviceFee: string },
): Pick<QuoteExplanation['tax'], 'creditImpact' | 'contributionImpact' | 'serviceFee'> => {
  const line = (locked: TaxRateApplied | undefined, rate: string): ExplainedTaxLine => ({ rate, rule: locked?.rule ?? null })
  return {
    creditImpact: line(section?.creditImpact, rates.creditImpact),
    contributionImpact: line(section?.contributionImpact, rates.contributionImpact),
    serviceFee: line(section?.serviceFee, rates.serviceFee),
  }
}

function sectionOf(rates: LockedQuote['contribution']['taxRates']): ExplainedSection {
  return {
    taxRates: { impactTax: rates.impactTax, serviceFee: rates.serviceFee, serviceFeeTax: rates.serviceFeeTax },
    grossFactor: grossFactorOf(rates).toString(),
    splitWeights: splitWeightsOf(rates).map((w) => w.toString()),
    effectiveRates: displayRatesOf(rates),
  }
}

const ROUNDING_CARBON = [
  { figure: 'footprint.co2eGrams', rule: 'spend × (factor value + tailpipe value) × 1000, half-up to 1 decimal' },
  { figure: 'footprint.co2eOunces', rule: `the unrounded grams ÷ ${GRAMS_PER_OUNCE}, half-up to 2 decimals` },
]
const ROUNDING_NATURE = [
  { figure: 'footprint.areaSquareMetres', rule: 'spend × factor value, half-up to 2 decimals' },
  { figure: 'footprint.areaSquareFeet', rule: `the unrounded m² × ${SQUARE_FEET_PER_SQUARE_METRE}, half-up to 2 decimals` },
]
const ROUNDING_COMMON = [
  { figure: 'footprint.equivalents[].value', rule: 'half-up to 2 decimals below 1, 1 decimal below 10, whole numbers from 10' },
  {
    figure: 'effectiveRates',
    rule: 'splitWeights ÷ grossFactor to 10 decimals: 10¹⁰ units split by the exact weights (largest remainder), so they sum to 1',
  },
]

function roundingSteps(impactType: 'carbon' | 'nature', minorUnits: number): QuoteExplanation['rounding'] {
  if (impactType === 'nature') return [...ROUNDING_NATURE, ...ROUNDING_COMMON]
  const unit = minorUnits === 0 ? 'whole units' : `${minorUnits} decimals (the currency's minor units)`
  return [
    ...ROUNDING_CARBON,
    { figure: 'credits.projects[].unitPrice', rule: `catalogue price × fx.rate, half-up to ${unit}` },
    { figure: 'credits.unitPrice', rule: `Σ weight × catalogue price × fx.rate ÷ Σ weight (unrounded prices), half-up to ${unit}` },
    { figure: 'credits.amounts.total', rule: `tonnes × unitPrice × grossFactor, half-up to ${unit}, at least one minor unit` },
    {
      figure: 'credits.amounts',
      rule: 'the total in minor units split by splitWeights: each part floored, the leftover units to the largest remainders (ties to the first), so they sum to the total',
    },
    ...ROUNDING_COMMON,
  ]
}

function equivalentBasis(key: string, locale: string): string {
  const miles = locale === 'en-GB' || locale === 'en-US'
  switch (key) {
    case 'car':
      return miles ? `co2eGrams ÷ ${CAR_GRAMS_PER_MILE} g CO2e per mile` : `co2eGrams ÷ ${CAR_GRAMS_PER_KM} g CO2e per km`
    case 'phone':
      return `co2eGrams ÷ ${PHONE_GRAMS_PER_CHARGE} g CO2 per smartphone charge`
    case 'tree':
      return `co2eGrams × ${DAYS_PER_10_YEARS} days ÷ ${TREE_GRAMS_PER_10_YEARS} g absorbed by a tree seedling in 10 years`
    case 'parkingSpace':
      return `areaSquareMetres ÷ ${PARKING_SPACE_SQUARE_METRES} m² per parking space`
    case 'tennisCourt':
      return `areaSquareMetres ÷ ${TENNIS_COURT_SQUARE_METRES} m² per tennis court`
    default:
      return 'not described'
  }
}

/** The explanation of a stored quote, from what it locked. */
export function explainQuote(source: ExplainSource): QuoteExplanation {
  const { locked } = source
  const { provenance } = locked
  const missing: string[] = []
  if (provenance.tax.lines === undefined) missing.push('tax rules: the rule behind each tax rate was not locked (only the rates were)')
  if (provenance.deflatorBasis === undefined)
    missing.push('deflator basis: the CPI figures behind the deflator were not locked (only their ratio was)')
  if (provenance.merchantCountryCode === undefined && source.requestMerchantCountryCode === null) {
    missing.push("merchant country: the quote named no merchant and did not lock the organisation's country")
  }
  const projects = locked.credits?.projects ?? []
  if (projects.some((p) => p.fx === undefined)) {
    missing.push("project exchange rates: the rate converting each project's catalogue price was not locked (only the converted price was)")
  }

  const factor = provenance.factor
  const amount = new Decimal(String(source.transaction.amount))
  const spend = amount.times(provenance.fx.rate).times(provenance.deflator)
  const perUnit = new Decimal(factor.value).plus(factor.tailpipeValue ?? '0')
  const result: QuoteExplanation['footprint']['result'] =
    locked.footprint.kind === 'carbon'
      ? {
          kind: 'carbon',
          gramsExact: spend.times(perUnit).times(1000).toString(),
          co2eGrams: locked.footprint.co2eGrams,
          co2eOunces: locked.footprint.co2eOunces,
        }
      : {
          kind: 'nature',
          squareMetresExact: spend.times(factor.value).toString(),
          areaSquareMetres: locked.footprint.areaSquareMetres,
          areaSquareFeet: locked.footprint.areaSquareFeet,
        }

  const { credits } = locked
  let explainedCredits: QuoteExplanation['credits'] = null
  if (credits !== undefined && locked.footprint.kind === 'carbon') {
    const explainedProjects = credits.projects.map((p): ExplainedProject => ({
      id: p.id,
      name: p.name,
      impactPartnerId: p.impactPartnerId,
      catalogue: { price: p.catalogue.price, currencyCode: p.catalogue.currencyCode },
      fx: p.fx ?? null,
      unitPrice: p.unitPrice,
      weight: p.weight,
      weightShare: p.weightShare,
    }))
    const weightSum = credits.projects.reduce((sum, p) => sum.plus(p.weight), new Decimal(0))
    const unitPriceExact = credits.projects.every((p) => p.fx !== undefined)
      ? credits.projects
          .reduce((sum, p) => sum.plus(new Decimal(p.weight).times(p.catalogue.price).times(p.fx?.rate ?? '0')), new Decimal(0))
          .div(weightSum)
          .toString()
      : null
    const tonnes = new Decimal(locked.footprint.co2eGrams).div(1_000_000)
    explainedCredits = {
      projects: explainedProjects,
      unitPriceExact,
      unitPrice: credits.unit.price,
      tonnes: tonnes.toString(),
      section: sectionOf(credits.taxRates),
      totalExact: tonnes.times(credits.unit.price).times(grossFactorOf(credits.taxRates)).toString(),
      amounts: { ...credits.amounts },
    }
  }

  const contributionRates = locked.contribution.taxRates
  return {
    quoteId: source.quoteId,
    createdAt: source.createdAt.toISOString(),
    quoteDate: source.createdAt.toISOString().slice(0, 10),
    impactType: locked.impactType,
    currencyCode: locked.currencyCode,
    minorUnits: locked.minorUnits,
    missing,
    transaction: { amount: amount.toString(), currencyCode: source.transaction.currencyCode },
    footprint: {
      mcc: factor.mcc,
      merchantCountryCode: provenance.merchantCountryCode ?? source.requestMerchantCountryCode,
      factor: {
        id: factor.id,
        source: factor.source,
        version: factor.version,
        region: factor.region,
        matchedBy: factor.matchedBy,
        value: factor.value,
        tailpipeValue: factor.tailpipeValue ?? null,
        unit:
          locked.footprint.kind === 'carbon'
            ? `kg CO2e per ${factor.baseCurrency} of spend at ${factor.priceYear} prices`
            : `m² of intact nature lost (MSA) per ${factor.baseCurrency} of spend at ${factor.priceYear} prices`,
        baseCurrency: factor.baseCurrency,
        priceYear: factor.priceYear,
      },
      fx: { ...provenance.fx },
      deflator: {
        value: provenance.deflator,
        basis: provenance.deflatorBasis ?? null,
        rule:
          provenance.deflatorBasis === undefined
            ? 'the price-year adjustment the quote locked (its CPI figures were not locked)'
            : provenance.deflatorBasis === null
              ? 'none: 1 (only USD factors are adjusted, by US CPI-U)'
              : "CPI of the factor's price year ÷ CPI of the quote's year",
      },
      spend: spend.toString(),
      result,
      equivalents: locked.equivalents.map((e) => ({ key: e.key, value: e.value, basis: equivalentBasis(e.key, locked.locale) })),
    },
    tax: {
      ruleSetVersion: provenance.tax.ruleSetVersion,
      effectiveDate: provenance.tax.effectiveDate,
      rateSource: provenance.tax.rateSource ?? null,
      jurisdiction: provenance.tax.jurisdiction,
      ...rulesOf(provenance.tax.lines, {
        creditImpact: credits?.taxRates.impactTax ?? provenance.tax.lines?.creditImpact.rate ?? '0',
        contributionImpact: contributionRates.impactTax,
        serviceFee: contributionRates.serviceFeeTax,
      }),
    },
    credits: explainedCredits,
    contribution: { ...sectionOf(contributionRates), impactPartnerIds: [...locked.contribution.impactPartnerIds] },
    rounding: roundingSteps(locked.impactType, locked.minorUnits),
  }
}
