// Turns a purchase into a locked quote (docs/pricing.md): footprint, equivalents, tax, credits
// total and its exact split, contribution rates and partners. Pure: the date and data are inputs.
import type {
  ConsumerLocation,
  CreditAmounts,
  CreditProject,
  EffectiveRates,
  FxTable,
  ImpactPartner,
  ImpactType,
  LockedQuote,
  MerchantLocation,
  PartnerRates,
  QuotedProject,
  SectionTaxRates,
  TaxJurisdiction,
  TaxRateApplied,
} from './types.js'
import {
  Decimal,
  decimalTextToMinorUnits,
  formatDecimal,
  formatMinorUnits,
  formatRate,
  minorUnitsOf,
  parseDecimal,
  plainDecimalOf,
  productHalfUp,
  roundHalfUp,
  scaledWeightsOf,
  splitByIntegerWeights,
  splitByWeights,
  toMinorUnits,
  type PlainDecimal,
} from './money.js'
import { DomainError } from './errors.js'
import { memo } from './memo.js'
import { convert, isPricedCurrency } from './fx.js'
import { isKnownCountry } from './countries.js'
import { assertIsoDate } from './dates.js'
import { footprintOfText, parseMcc, planFootprint, type FactorSet, type FootprintPlan } from './footprint.js'
import { describeEquivalents, resolveLocale } from './equivalents.js'
import { projectWeight, selectContributionPartners, selectCreditProjects } from './projects.js'
import { TAX_RULE_SET, resolveJurisdiction, taxRatesFor, taxRuleFor, type TaxLine } from './tax.js'

export interface QuoteInput {
  readonly impactType: ImpactType
  /** Transaction amount in major units, a decimal string > 0 with at most the currency's minor units. */
  readonly amount: string
  readonly currencyCode: string
  /** 4 digits: merchant.mcc, else the organisation's MCC (resolved by the caller). */
  readonly mcc: string
  readonly merchant: MerchantLocation
  readonly consumer: ConsumerLocation
  readonly locale?: string | undefined
  readonly matchConsumerLocation: boolean
  /** f: the organisation's service fee as a proportion of impact, e.g. "0.2". */
  readonly serviceFeeRate: string
  /** "YYYY-MM-DD" (UTC): the quote date, for tax rates and the CPI year. */
  readonly date: string
}

export interface ReferenceData {
  /** Operator-imported factors first, then DEFAULT_EMISSION_FACTORS, indexed once (indexFactors). */
  readonly factors: FactorSet
  readonly fx: FxTable
  /** Already filtered to the organisation's allowed partners. */
  readonly partners: readonly ImpactPartner[]
  readonly projects: readonly CreditProject[]
}

/**
 * The raw split weights of a section, in the order impact, impactTax, serviceFee, serviceFeeTax:
 * [1, ti, f, f·tf] (exact products). They are proportional to the effective rates (each is the rate
 * × D); every split of money uses these, never the rounded rates.
 */
export function splitWeightsOf(rates: SectionTaxRates): readonly [Decimal, Decimal, Decimal, Decimal] {
  const serviceFee = new Decimal(rates.serviceFee)
  return [new Decimal(1), new Decimal(rates.impactTax), serviceFee, serviceFee.times(rates.serviceFeeTax)]
}

/** D = 1 + ti + f·(1 + tf): the total paid per unit of impact. */
export function grossFactorOf(rates: SectionTaxRates): Decimal {
  return splitWeightsOf(rates).reduce((sum, weight) => sum.plus(weight), new Decimal(0))
}

/** The checks of a quote's context, in the order priceQuote makes them; returns the currency's minor units. */
function checkContext(context: QuoteContext, fx: FxTable): number {
  if (!isPricedCurrency(context.currencyCode, fx)) {
    throw new DomainError(
      'UNSUPPORTED_CURRENCY',
      `unsupported currency ${JSON.stringify(context.currencyCode)}`,
      '/transaction/currencyCode',
    )
  }
  const digits = minorUnitsOf(context.currencyCode)
  if (!isKnownCountry(context.consumer.countryCode)) {
    throw new DomainError('UNKNOWN_COUNTRY', `unknown country ${JSON.stringify(context.consumer.countryCode)}`, '/consumer/countryCode')
  }
  if (!isKnownCountry(context.merchant.countryCode)) {
    throw new DomainError(
      'UNKNOWN_COUNTRY',
      `unknown country ${JSON.stringify(context.merchant.countryCode)}`,
      '/merchant/address/countryCode',
    )
  }
  parseMcc(context.mcc)
  return digits
}

/** Checks the amount: a decimal > 0 with at most `digits` decimals (a Decimal is built only for one not written plainly). */
function checkAmount(text: string, digits: number): void {
  const plain = plainDecimalOf(text)
  const positive = plain === undefined ? parseDecimal(text, '/transaction/amount').greaterThan(0) : plain.units > 0n
  if (!positive) {
    throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be greater than 0', '/transaction/amount')
  }
  // The same errors as toMinorUnits(amount, …), read from the text: no Decimal arithmetic for a plain decimal.
  decimalTextToMinorUnits(text, digits, '/transaction/amount')
}

/** The configuration a quote is priced with: its date and the service fee rate (RangeError when malformed). */
function checkConfiguration(context: QuoteContext): Decimal {
  assertIsoDate(context.date)
  try {
    return new Decimal(context.serviceFeeRate)
  } catch {
    throw new RangeError(`service fee rate must be a decimal string, got ${JSON.stringify(context.serviceFeeRate)}`)
  }
}

/** The partner details a quote locks (the catalogue's objects are never mutated, so they are shared, not copied). */
const partnerDetails = (partner: ImpactPartner): LockedQuote['partners'][number] => ({
  id: partner.id,
  name: partner.name,
  shortDescription: partner.shortDescription,
  images: partner.images,
})

/** Section amounts as strings, from the exact split of the total in minor units by the section's scaled weights. */
function amountsOf(total: bigint, weights: readonly bigint[], digits: number): CreditAmounts {
  const [impact = 0n, impactTax = 0n, serviceFee = 0n, serviceFeeTax = 0n] = splitByIntegerWeights(total, weights)
  const text = (minor: bigint): string => formatMinorUnits(minor, digits)
  return {
    total: text(total),
    impact: text(impact),
    impactTax: text(impactTax),
    serviceFee: text(serviceFee),
    serviceFeeTax: text(serviceFeeTax),
  }
}

interface PricedPortfolio {
  readonly unitPrice: Decimal
  readonly projects: readonly QuotedProject[]
}

/**
 * Prices a portfolio in the quote currency: per-project unit prices converted and rounded half-up
 * to minor units; the portfolio's unit price = Σ wᵢ·priceᵢ (converted, unrounded) / Σ w, rounded
 * half-up to minor units (a named rounding point); weight shares to 10 decimals for display.
 */
function pricePortfolio(selected: readonly CreditProject[], currencyCode: string, fx: FxTable, digits: number): PricedPortfolio {
  const priced = selected.map((project) => {
    const conversion = convert(new Decimal(project.price), project.priceCurrency, currencyCode, fx)
    return { project, weight: new Decimal(projectWeight(project)), price: conversion.amount, rate: conversion.rate }
  })
  const weightSum = priced.reduce((acc, { weight }) => acc.plus(weight), new Decimal(0))
  const unitPrice = roundHalfUp(
    priced.reduce((acc, { weight, price }) => acc.plus(weight.times(price)), new Decimal(0)).div(weightSum),
    digits,
  )
  const projects: QuotedProject[] = priced.map(({ project, weight, price, rate }) => ({
    id: project.id,
    impactPartnerId: project.impactPartnerId,
    name: project.name,
    shortDescription: project.shortDescription,
    type: project.type,
    location: { countryCode: project.location.countryCode, state: project.location.state },
    unitPrice: formatDecimal(roundHalfUp(price, digits), digits),
    catalogue: { price: project.price, currencyCode: project.priceCurrency },
    weight: projectWeight(project),
    weightShare: weight.div(weightSum).toDecimalPlaces(10, Decimal.ROUND_HALF_UP).toString(),
    fx: { rate, date: fx.date, source: fx.source },
  }))
  return { unitPrice, projects }
}

type CreditsSection = NonNullable<LockedQuote['credits']>

/** The credits section of a carbon quote without its amounts, and what the amounts are computed with. */
interface CreditsPlan {
  readonly section: Omit<CreditsSection, 'amounts'>
  readonly unitPrice: Decimal
  /** D = 1 + ti + f·(1 + tf) (grossFactorOf). */
  readonly grossFactor: Decimal
  /** unitPrice and grossFactor as plain decimals, for the total in bigint arithmetic (priceCredits). */
  readonly exactFactors: readonly [PlainDecimal | undefined, PlainDecimal | undefined]
  /** splitWeightsOf(taxRates) scaled to integers with a common scale: the same split, in bigint arithmetic. */
  readonly splitWeights: readonly bigint[]
}

/** The credits section of a carbon quote, before its amounts (see priceQuote). Throws NO_CREDIT_PROJECTS. */
function planCredits(context: QuoteContext, reference: ReferenceData, taxRates: SectionTaxRates, digits: number): CreditsPlan {
  const activePartners = new Set(reference.partners.filter((partner) => partner.active).map((partner) => partner.id))
  const candidates = reference.projects.filter(
    (project) => activePartners.has(project.impactPartnerId) && isPricedCurrency(project.priceCurrency, reference.fx),
  )
  const selection = selectCreditProjects(candidates, context.consumer, context.matchConsumerLocation)
  if (selection.projects.length === 0) {
    throw new DomainError('NO_CREDIT_PROJECTS', 'no carbon credit projects are available for this quote')
  }
  const { unitPrice, projects } = pricePortfolio(selection.projects, context.currencyCode, reference.fx, digits)
  const grossFactor = grossFactorOf(taxRates)
  return {
    section: {
      taxRates,
      unit: { description: 'tCO2e', price: formatDecimal(unitPrice, digits) },
      consumerLocationMatchAccuracy: selection.accuracy,
      projects,
      impactPartnerIds: [...new Set(projects.map((project) => project.impactPartnerId))],
    },
    unitPrice,
    grossFactor,
    exactFactors: [plainDecimalOf(unitPrice.toFixed()), plainDecimalOf(grossFactor.toFixed())],
    splitWeights: scaledWeightsOf(splitWeightsOf(taxRates)).scaled,
  }
}

/** A gram in tonnes, as a plain decimal. */
const TONNES_PER_GRAM: PlainDecimal = { units: 1n, scale: 6 }

/**
 * The total of `co2eGrams` in minor units: tonnes × unit price × D, half-up, as Decimal computes it. In bigint arithmetic
 * where productHalfUp proves the same answer (every figure a plain decimal, the product within Decimal's 50 digits, so
 * Decimal's products are exact), else with Decimal.
 */
function creditsTotal(plan: CreditsPlan, co2eGrams: string, digits: number): bigint {
  const grams = plainDecimalOf(co2eGrams)
  const exact = grams && productHalfUp(grams.units, grams.scale, [TONNES_PER_GRAM, ...plan.exactFactors], digits)
  if (exact !== undefined) return decimalTextToMinorUnits(exact, digits)
  const tonnes = new Decimal(co2eGrams).div(1_000_000)
  return toMinorUnits(roundHalfUp(tonnes.times(plan.unitPrice).times(plan.grossFactor), digits), digits)
}

/** The credits section of a quote of `co2eGrams` (see priceQuote). */
function priceCredits(plan: CreditsPlan, co2eGrams: string, digits: number): CreditsSection {
  // Named rounding point: the total, half-up to minor units, never below one minor unit.
  const rounded = creditsTotal(plan, co2eGrams, digits)
  const total = rounded < 1n ? 1n : rounded
  const { taxRates, unit, consumerLocationMatchAccuracy, projects, impactPartnerIds } = plan.section
  return { taxRates, amounts: amountsOf(total, plan.splitWeights, digits), unit, consumerLocationMatchAccuracy, projects, impactPartnerIds }
}

/** Everything of a quote's input but its amount. */
export type QuoteContext = Omit<QuoteInput, 'amount'>

/**
 * What priceQuote works out before it looks at the amount: the locale, the footprint's factor and multipliers, the
 * jurisdiction and tax rates with their rules, the projects and their prices, the contribution partners and the
 * partner details, and what the credits amounts are computed with. It depends only on the context (every field of
 * QuoteContext that pricing reads: see quoteContextOf) and the reference data, so quotes of one context and one
 * reference can share it; it is immutable, and so is everything priceQuote takes from it into a locked quote.
 */
export interface QuotePlan {
  readonly impactType: ImpactType
  readonly currencyCode: string
  readonly digits: number
  readonly locale: string
  readonly footprint: FootprintPlan
  readonly provenance: LockedQuote['provenance']
  readonly credits: CreditsPlan | undefined
  readonly contribution: LockedQuote['contribution']
  readonly partners: LockedQuote['partners']
}

/**
 * The context of a quote: exactly the fields of `input` that pricing reads besides the amount (the consumer's and
 * the merchant's country and state, not the consumer's city or postal code). Its JSON is a complete key for the
 * plan: two inputs with the same JSON get the same plan from the same reference data.
 */
export function quoteContextOf(input: QuoteContext): QuoteContext {
  return {
    impactType: input.impactType,
    currencyCode: input.currencyCode,
    mcc: input.mcc,
    merchant: { countryCode: input.merchant.countryCode, state: input.merchant.state },
    consumer: { countryCode: input.consumer.countryCode, state: input.consumer.state },
    locale: input.locale,
    matchConsumerLocation: input.matchConsumerLocation,
    serviceFeeRate: input.serviceFeeRate,
    date: input.date,
  }
}

/** The plan of a quote context (see QuotePlan), with the same checks and errors as priceQuote bar the amount's. */
export function planQuote(context: QuoteContext, reference: ReferenceData): QuotePlan {
  const digits = checkContext(context, reference.fx)
  const serviceFeeRate = checkConfiguration(context)
  const locale = resolveLocale(context.locale)
  const footprint = planFootprint(
    {
      kind: context.impactType,
      currencyCode: context.currencyCode,
      mcc: context.mcc,
      merchantCountry: context.merchant.countryCode,
      date: context.date,
    },
    reference.factors,
    reference.fx,
  )
  const jurisdiction = resolveJurisdiction(context.consumer, context.merchant)
  const taxRates = taxRatesFor(jurisdiction, context.date, serviceFeeRate)

  const contributionPartners = selectContributionPartners(reference.partners)
  const partnersById = new Map(reference.partners.map((partner) => [partner.id, partner]))
  const referenced = new Map<string, ImpactPartner>()

  const credits = context.impactType === 'carbon' ? planCredits(context, reference, taxRates.credits, digits) : undefined
  for (const id of credits?.section.impactPartnerIds ?? []) {
    const partner = partnersById.get(id)
    if (partner !== undefined) referenced.set(id, partner)
  }
  for (const partner of contributionPartners) referenced.set(partner.id, partner)

  return {
    impactType: context.impactType,
    currencyCode: context.currencyCode,
    digits,
    locale,
    footprint,
    provenance: {
      factor: footprint.provenance,
      fx: footprint.fx,
      deflator: footprint.deflator,
      deflatorBasis: footprint.deflatorBasis,
      merchantCountryCode: context.merchant.countryCode,
      tax: {
        ruleSetVersion: TAX_RULE_SET.version,
        effectiveDate: TAX_RULE_SET.effectiveDate,
        jurisdiction,
        rateSource: TAX_RULE_SET.rateSource,
        lines: {
          creditImpact: taxRuleApplied('creditImpact', jurisdiction, context.date),
          contributionImpact: taxRuleApplied('contributionImpact', jurisdiction, context.date),
          serviceFee: taxRuleApplied('serviceFee', jurisdiction, context.date),
        },
      },
    },
    credits,
    contribution: {
      taxRates: taxRates.contribution,
      impactPartnerIds: contributionPartners.map((partner) => partner.id),
    },
    partners: [...referenced.values()].map(partnerDetails),
  }
}

/**
 * Prices a quote and returns everything a stored quote needs (docs/pricing.md), as plain JSON data.
 *
 * Validation (DomainError, with JSON-pointer paths into the quote request): UNSUPPORTED_CURRENCY
 * (/transaction/currencyCode), UNKNOWN_COUNTRY (/consumer/countryCode,
 * /merchant/address/countryCode), INVALID_MCC (/merchant/mcc), AMOUNT_OUT_OF_RANGE (≤ 0) and
 * AMOUNT_PRECISION (too many decimals) at /transaction/amount; NO_CREDIT_PROJECTS for a carbon
 * quote with no eligible project. `serviceFeeRate` and `date` are configuration: bad values throw
 * RangeError.
 *
 * Credits (carbon only), in the quote currency with its ISO minor units:
 * - projects: selectCreditProjects over active projects whose partner is in `partners` and active,
 *   whose price currency can be converted; weights = catalogue weight or "1";
 * - per-project unitPrice = price converted to the quote currency, rounded half-up to minor units;
 * - unit.price = Σ wᵢ·priceᵢ (converted, unrounded) / Σ w, rounded half-up to minor units;
 * - tonnes = co2eGrams (as quoted, 1 dp) / 1,000,000;
 * - total T = tonnes × unit.price × D rounded half-up to minor units, at least one minor unit;
 * - amounts = splitByWeights(T, [1, ti, f, f·tf]), so total = impact + impactTax + serviceFee +
 *   serviceFeeTax exactly, and allocating T reproduces them.
 * Contribution: impactTax "0", the same f, the jurisdiction's service-fee tax; partners =
 * selectContributionPartners(partners) (may be empty: allocation then refuses a contribution).
 * Per-partner rates are derived, not stored (see partnerRatesOf). Nature quotes have no credits section.
 *
 * Everything but the footprint, the equivalents and the credits amounts comes from the quote's plan (planQuote), which
 * `planOf` gives for the input's context; a caller that prices many quotes passes one that reuses the plans it made
 * with the same reference data (src/services/quote-plans.ts). The context and the amount are checked first, so the
 * errors come in the same order either way.
 */
export function priceQuote(
  input: QuoteInput,
  reference: ReferenceData,
  planOf: (context: QuoteContext) => QuotePlan = (context) => planQuote(context, reference),
): LockedQuote {
  const context = quoteContextOf(input)
  checkAmount(input.amount, checkContext(context, reference.fx))
  const plan = planOf(context)
  const footprint = footprintOfText(plan.footprint, input.amount)
  return {
    impactType: plan.impactType,
    currencyCode: plan.currencyCode,
    minorUnits: plan.digits,
    locale: plan.locale,
    footprint,
    equivalents: describeEquivalents(footprint, plan.locale),
    provenance: plan.provenance,
    ...(plan.credits === undefined || footprint.kind !== 'carbon'
      ? {}
      : { credits: priceCredits(plan.credits, footprint.co2eGrams, plan.digits) }),
    contribution: plan.contribution,
    partners: plan.partners,
  }
}

/** A line's rate and rule as a quote locks them (what GET /quotes/:id/explain reads back). */
function taxRuleApplied(line: TaxLine, jurisdiction: TaxJurisdiction, date: string): TaxRateApplied {
  const { rate, rule } = taxRuleFor(line, jurisdiction, date)
  return { rate: formatRate(rate), rule }
}

/**
 * Effective rates for display (the API's JSON numbers): rounded to `decimals` places by splitting
 * 10^decimals units with the exact weights [1, ti, f, f·tf] (largest remainder), so the four values
 * still sum to exactly 1 and each is within 10^-decimals of its full-precision rate.
 */
export function displayRatesOf(rates: SectionTaxRates, decimals = 10): EffectiveRates {
  return displayRates(`${decimals}|${rates.impactTax}|${rates.serviceFee}|${rates.serviceFeeTax}`)
}

// Every quote response shows two or four rate sets, and they are the same few sets again and again (one per tax rate
// and service fee in use): each is split once. The key holds all the inputs ("|" is in no decimal string).
const displayRates = memo(256, (key): EffectiveRates => {
  const [decimals = '', impactTax = '', serviceFee = '', serviceFeeTax = ''] = key.split('|')
  return Object.freeze(computeDisplayRates({ impactTax, serviceFee, serviceFeeTax }, Number(decimals)))
})

function computeDisplayRates(rates: SectionTaxRates, decimals: number): EffectiveRates {
  const [impact = 0n, impactTax = 0n, serviceFee = 0n, serviceFeeTax = 0n] = splitByWeights(10n ** BigInt(decimals), splitWeightsOf(rates))
  const text = (units: bigint): string => formatRate(formatMinorUnits(units, decimals))
  return { impact: text(impact), impactTax: text(impactTax), serviceFee: text(serviceFee), serviceFeeTax: text(serviceFeeTax) }
}

/**
 * The rates per impact partner (the quote's partnerRates), for display (see displayRatesOf): one entry per
 * credits partner with the credits section's rates, and one per contribution partner with the contribution
 * rates. Every partner of a section shares its tax treatment, so these are derived rather than stored.
 */
export function partnerRatesOf(quote: LockedQuote, decimals = 10): { credits: PartnerRates[]; contribution: PartnerRates[] } {
  const { credits, contribution } = quote
  const contributionRates = displayRatesOf(contribution.taxRates, decimals)
  const creditsRates = credits === undefined ? contributionRates : displayRatesOf(credits.taxRates, decimals)
  return {
    credits: (credits?.impactPartnerIds ?? []).map((partnerId) => ({ partnerId, rates: creditsRates })),
    contribution: contribution.impactPartnerIds.map((partnerId) => ({ partnerId, rates: contributionRates })),
  }
}
