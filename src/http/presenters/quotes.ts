// Stored quote → wire (docs/api-contract.md, "Quotes"). Deterministic: GET returns exactly what creation
// returned, because both present the same stored quote.
import type { Quote } from '../../db/repositories/quotes.js'
import { countryName } from '../../domain/countries.js'
import { describeEquivalents, resolveLocale } from '../../domain/equivalents.js'
import { displayRatesOf, partnerRatesOf } from '../../domain/pricing.js'
import type { EffectiveRates, LockedQuote, PartnerImages, QuotedProject, SectionTaxRates } from '../../domain/types.js'
import type { CarbonQuoteBody, NatureQuoteBody, QuoteProjectBody } from '../schemas/quotes.js'

const wireRates = (rates: EffectiveRates) => ({
  impact: Number(rates.impact),
  impactTax: Number(rates.impactTax),
  serviceFee: Number(rates.serviceFee),
  serviceFeeTax: Number(rates.serviceFeeTax),
})
type WireRates = ReturnType<typeof wireRates>

/**
 * A section's effective rates on the wire, by its tax rates object: a quote's come from its plan (src/domain/pricing.ts,
 * QuotePlan) and are shared by every quote of it, so they are worked out once, not per response. Never mutated.
 */
const wireRatesByTaxRates = new WeakMap<SectionTaxRates, WireRates>()
function wireRatesOf(taxRates: SectionTaxRates): WireRates {
  let rates = wireRatesByTaxRates.get(taxRates)
  if (rates === undefined) {
    rates = Object.freeze(wireRates(displayRatesOf(taxRates)))
    wireRatesByTaxRates.set(taxRates, rates)
  }
  return rates
}

const wireImages = (images: PartnerImages) => ({
  ...(images.logos ? { logos: images.logos.map((i) => ({ ...i })) } : {}),
  ...(images.thumbnails ? { thumbnails: images.thumbnails.map((i) => ({ ...i })) } : {}),
  ...(images.backgrounds ? { backgrounds: images.backgrounds.map((i) => ({ ...i })) } : {}),
})

function wirePartners(locked: LockedQuote, ids: readonly string[]) {
  const byId = new Map(locked.partners.map((p) => [p.id, p]))
  return ids.flatMap((id) => {
    const partner = byId.get(id)
    return partner
      ? [{ id: partner.id, name: partner.name, shortDescription: partner.shortDescription, images: wireImages(partner.images) }]
      : []
  })
}

const wireEquivalents = (equivalents: LockedQuote['equivalents']) =>
  equivalents.map((e) => ({ key: e.key, value: e.value, description: e.description }))

interface PresentOptions {
  includeImpactPartnerDetails: boolean
  includeImpactPartnerRates: boolean
}

export function presentQuote(quote: Quote, options: PresentOptions = quote.request.responseOptions): CarbonQuoteBody | NatureQuoteBody {
  const { locked } = quote
  const { includeImpactPartnerDetails, includeImpactPartnerRates } = options
  const effectiveRates = wireRatesOf(locked.contribution.taxRates)
  // Objects built field by field in the wire's order (no spreads: this runs for every quote and session).
  const contribution = includeImpactPartnerDetails
    ? { effectiveRates, impactPartners: wirePartners(locked, locked.contribution.impactPartnerIds) }
    : { effectiveRates }
  const partnerRates = includeImpactPartnerRates ? partnerRatesOnWire(locked) : undefined
  const equivalents = wireEquivalents(locked.equivalents)
  const createdAt = quote.createdAt.toISOString()
  if (locked.footprint.kind === 'nature' || !locked.credits) {
    const area = locked.footprint.kind === 'nature' ? locked.footprint : { areaSquareMetres: '0', areaSquareFeet: '0' }
    const footprint = { areaSquareMetres: Number(area.areaSquareMetres), areaSquareFeet: Number(area.areaSquareFeet), equivalents }
    return partnerRates === undefined
      ? { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt, footprint, contribution }
      : { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt, footprint, contribution, partnerRates }
  }
  const { credits } = locked
  const { amounts } = credits
  const creditsBody = {
    amounts: {
      total: Number(amounts.total),
      impact: Number(amounts.impact),
      impactTax: Number(amounts.impactTax),
      serviceFee: Number(amounts.serviceFee),
      serviceFeeTax: Number(amounts.serviceFeeTax),
    },
    effectiveRates: wireRatesOf(credits.taxRates),
    unit: { description: credits.unit.description, price: Number(credits.unit.price) },
    consumerLocationMatchAccuracy: credits.consumerLocationMatchAccuracy,
    ...(includeImpactPartnerDetails ? { impactPartners: wirePartners(locked, credits.impactPartnerIds) } : {}),
  }
  const footprint = { co2eGrams: Number(locked.footprint.co2eGrams), co2eOunces: Number(locked.footprint.co2eOunces), equivalents }
  return partnerRates === undefined
    ? { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt, footprint, credits: creditsBody, contribution }
    : { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt, footprint, credits: creditsBody, contribution, partnerRates }
}

function partnerRatesOnWire(locked: LockedQuote) {
  const rates = partnerRatesOf(locked)
  return {
    credits: rates.credits.map((r) => ({ partnerId: r.partnerId, rates: wireRates(r.rates) })),
    contribution: rates.contribution.map((r) => ({ partnerId: r.partnerId, rates: wireRates(r.rates) })),
  }
}

export function presentCarbonQuote(quote: Quote): CarbonQuoteBody {
  const body = presentQuote(quote)
  if (!('credits' in body)) throw new Error(`quote ${quote.id} is not a carbon quote`)
  return body
}

export function presentNatureQuote(quote: Quote): NatureQuoteBody {
  const body = presentQuote(quote)
  if ('credits' in body) throw new Error(`quote ${quote.id} is not a nature quote`)
  return body
}

export function presentQuoteProjects(currencyCode: string, projects: readonly QuotedProject[]): QuoteProjectBody[] {
  return projects.map((p) => ({
    id: p.id,
    impactPartnerId: p.impactPartnerId,
    name: p.name,
    shortDescription: p.shortDescription,
    type: p.type,
    location: { countryCode: p.location.countryCode, state: p.location.state },
    unit: { description: 'tCO2e', price: Number(p.unitPrice), currencyCode },
    weight: Number(p.weightShare),
  }))
}

/**
 * A quote as a frontend SDK renders it (sessions): impact partners always included, no partnerRates,
 * equivalents re-localised for `requestedLocale` (after fallback) or else in the quote's own locale.
 */
export function presentSdkQuote(quote: Quote, requestedLocale: string | undefined) {
  const body = presentQuote(quote, { includeImpactPartnerDetails: true, includeImpactPartnerRates: false })
  const { locked } = quote
  const locale = requestedLocale === undefined ? locked.locale : resolveLocale(requestedLocale)
  const equivalents = locale === locked.locale ? body.footprint.equivalents : wireEquivalents(describeEquivalents(locked.footprint, locale))
  const contribution = { effectiveRates: body.contribution.effectiveRates, impactPartners: body.contribution.impactPartners ?? [] }
  if ('credits' in body) {
    return {
      currencyCode: body.currencyCode,
      locale,
      footprint: { ...body.footprint, equivalents },
      credits: {
        ...body.credits,
        impactPartners: body.credits.impactPartners ?? [],
        projects: (locked.credits?.projects ?? []).map((p) => ({
          id: p.id,
          impactPartnerId: p.impactPartnerId,
          name: p.name,
          shortDescription: p.shortDescription,
          location: {
            countryCode: p.location.countryCode,
            countryName: p.location.countryCode === null ? null : (countryName(p.location.countryCode, locale) ?? null),
            state: p.location.state,
          },
        })),
      },
      contribution,
    }
  }
  return { currencyCode: body.currencyCode, locale, footprint: { ...body.footprint, equivalents }, contribution }
}
