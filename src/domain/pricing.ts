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
  formatDecimal,
  formatMinorUnits,
  formatRate,
  minorUnitsOf,
  parseDecimal,
  roundHalfUp,
  splitByWeights,
  toMinorUnits,
} from './money.js'
import { DomainError } from './errors.js'
import { convert, isPricedCurrency } from './fx.js'
import { isKnownCountry } from './countries.js'
import { assertIsoDate } from './dates.js'
import { estimateFootprint, parseMcc, type FactorSet } from './footprint.js'
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

function validate(input: QuoteInput, fx: FxTable): { amount: Decimal; digits: number; serviceFeeRate: Decimal } {
  if (!isPricedCurrency(input.currencyCode, fx)) {
    throw new DomainError('UNSUPPORTED_CURRENCY', `unsupported currency ${JSON.stringify(input.currencyCode)}`, '/transaction/currencyCode')
  }
  const digits = minorUnitsOf(input.currencyCode)
  if (!isKnownCountry(input.consumer.countryCode)) {
    throw new DomainError('UNKNOWN_COUNTRY', `unknown country ${JSON.stringify(input.consumer.countryCode)}`, '/consumer/countryCode')
  }
  if (!isKnownCountry(input.merchant.countryCode)) {
    throw new DomainError(
      'UNKNOWN_COUNTRY',
      `unknown country ${JSON.stringify(input.merchant.countryCode)}`,
      '/merchant/address/countryCode',
    )
  }
  parseMcc(input.mcc)
  const amount = parseDecimal(input.amount, '/transaction/amount')
  if (!amount.greaterThan(0)) {
    throw new DomainError('AMOUNT_OUT_OF_RANGE', 'amount must be greater than 0', '/transaction/amount')
  }
  toMinorUnits(amount, digits, '/transaction/amount')
  assertIsoDate(input.date)
  let serviceFeeRate: Decimal
  try {
    serviceFeeRate = new Decimal(input.serviceFeeRate)
  } catch {
    throw new RangeError(`service fee rate must be a decimal string, got ${JSON.stringify(input.serviceFeeRate)}`)
  }
  return { amount, digits, serviceFeeRate }
}

/** The partner details a quote locks (the catalogue's objects are never mutated, so they are shared, not copied). */
const partnerDetails = (partner: ImpactPartner): LockedQuote['partners'][number] => ({
  id: partner.id,
  name: partner.name,
  shortDescription: partner.shortDescription,
  images: partner.images,
})

/** Section amounts as strings, from the exact split of the total in minor units. */
function amountsOf(total: bigint, rates: SectionTaxRates, digits: number): CreditAmounts {
  const [impact = 0n, impactTax = 0n, serviceFee = 0n, serviceFeeTax = 0n] = splitByWeights(total, splitWeightsOf(rates))
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

/** The credits section of a carbon quote (see priceQuote). Throws NO_CREDIT_PROJECTS. */
function priceCredits(
  input: QuoteInput,
  reference: ReferenceData,
  co2eGrams: string,
  taxRates: SectionTaxRates,
  digits: number,
): CreditsSection {
  const activePartners = new Set(reference.partners.filter((partner) => partner.active).map((partner) => partner.id))
  const candidates = reference.projects.filter(
    (project) => activePartners.has(project.impactPartnerId) && isPricedCurrency(project.priceCurrency, reference.fx),
  )
  const selection = selectCreditProjects(candidates, input.consumer, input.matchConsumerLocation)
  if (selection.projects.length === 0) {
    throw new DomainError('NO_CREDIT_PROJECTS', 'no carbon credit projects are available for this quote')
  }
  const { unitPrice, projects } = pricePortfolio(selection.projects, input.currencyCode, reference.fx, digits)

  const tonnes = new Decimal(co2eGrams).div(1_000_000)
  // Named rounding point: the total, half-up to minor units, never below one minor unit.
  const rounded = toMinorUnits(roundHalfUp(tonnes.times(unitPrice).times(grossFactorOf(taxRates)), digits), digits)
  const total = rounded < 1n ? 1n : rounded
  return {
    taxRates,
    amounts: amountsOf(total, taxRates, digits),
    unit: { description: 'tCO2e', price: formatDecimal(unitPrice, digits) },
    consumerLocationMatchAccuracy: selection.accuracy,
    projects,
    impactPartnerIds: [...new Set(projects.map((project) => project.impactPartnerId))],
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
 */
export function priceQuote(input: QuoteInput, reference: ReferenceData): LockedQuote {
  const { amount, digits, serviceFeeRate } = validate(input, reference.fx)
  const locale = resolveLocale(input.locale)
  const estimate = estimateFootprint(
    {
      kind: input.impactType,
      amount,
      currencyCode: input.currencyCode,
      mcc: input.mcc,
      merchantCountry: input.merchant.countryCode,
      date: input.date,
    },
    reference.factors,
    reference.fx,
  )
  const jurisdiction = resolveJurisdiction(input.consumer, input.merchant)
  const taxRates = taxRatesFor(jurisdiction, input.date, serviceFeeRate)

  const contributionPartners = selectContributionPartners(reference.partners)
  const partnersById = new Map(reference.partners.map((partner) => [partner.id, partner]))
  const referenced = new Map<string, ImpactPartner>()

  const credits =
    estimate.footprint.kind === 'carbon'
      ? priceCredits(input, reference, estimate.footprint.co2eGrams, taxRates.credits, digits)
      : undefined
  for (const id of credits?.impactPartnerIds ?? []) {
    const partner = partnersById.get(id)
    if (partner !== undefined) referenced.set(id, partner)
  }
  for (const partner of contributionPartners) referenced.set(partner.id, partner)

  return {
    impactType: input.impactType,
    currencyCode: input.currencyCode,
    minorUnits: digits,
    locale,
    footprint: estimate.footprint,
    equivalents: describeEquivalents(estimate.footprint, locale),
    provenance: {
      factor: estimate.provenance,
      fx: estimate.fx,
      deflator: estimate.deflator,
      deflatorBasis: estimate.deflatorBasis,
      merchantCountryCode: input.merchant.countryCode,
      tax: {
        ruleSetVersion: TAX_RULE_SET.version,
        effectiveDate: TAX_RULE_SET.effectiveDate,
        jurisdiction,
        rateSource: TAX_RULE_SET.rateSource,
        lines: {
          creditImpact: taxRuleApplied('creditImpact', jurisdiction, input.date),
          contributionImpact: taxRuleApplied('contributionImpact', jurisdiction, input.date),
          serviceFee: taxRuleApplied('serviceFee', jurisdiction, input.date),
        },
      },
    },
    ...(credits === undefined ? {} : { credits }),
    contribution: {
      taxRates: taxRates.contribution,
      impactPartnerIds: contributionPartners.map((partner) => partner.id),
    },
    partners: [...referenced.values()].map(partnerDetails),
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
