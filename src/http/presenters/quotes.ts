// Stored quote → wire (docs/api-contract.md, "Quotes"). Deterministic: GET returns exactly what creation
// returned, because both present the same stored quote.
import type { Quote } from '../../db/repositories/quotes.js'
import { countryName } from '../../domain/countries.js'
import { describeEquivalents, resolveLocale } from '../../domain/equivalents.js'
import { displayRatesOf, partnerRatesOf } from '../../domain/pricing.js'
import type { EffectiveRates, LockedQuote, PartnerImages, QuotedProject } from '../../domain/types.js'
import type { CarbonQuoteBody, NatureQuoteBody, QuoteProjectBody } from '../schemas/quotes.js'

const wireRates = (rates: EffectiveRates) => ({
  impact: Number(rates.impact),
  impactTax: Number(rates.impactTax),
  serviceFee: Number(rates.serviceFee),
  serviceFeeTax: Number(rates.serviceFeeTax),
})

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
  const contribution = {
    effectiveRates: wireRates(displayRatesOf(locked.contribution.taxRates)),
    ...(includeImpactPartnerDetails ? { impactPartners: wirePartners(locked, locked.contribution.impactPartnerIds) } : {}),
  }
  const partnerRates = includeImpactPartnerRates ? { partnerRates: partnerRatesOnWire(locked) } : {}
  const header = { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt: quote.createdAt.toISOString() }
  const equivalents = wireEquivalents(locked.equivalents)
  if (locked.footprint.kind === 'nature' || !locked.credits) {
    const area = locked.footprint.kind === 'nature' ? locked.footprint : { areaSquareMetres: '0', areaSquareFeet: '0' }
    return {
      ...header,
      footprint: { areaSquareMetres: Number(area.areaSquareMetres), areaSquareFeet: Number(area.areaSquareFeet), equivalents },
      contribution,
      ...partnerRates,
    }
  }
  const { credits } = locked
  return {
    ...header,
    footprint: { co2eGrams: Number(locked.footprint.co2eGrams), co2eOunces: Number(locked.footprint.co2eOunces), equivalents },
    credits: {
      amounts: {
        total: Number(credits.amounts.total),
        impact: Number(credits.amounts.impact),
        impactTax: Number(credits.amounts.impactTax),
        serviceFee: Number(credits.amounts.serviceFee),
        serviceFeeTax: Number(credits.amounts.serviceFeeTax),
      },
      effectiveRates: wireRates(displayRatesOf(credits.taxRates)),
      unit: { description: credits.unit.description, price: Number(credits.unit.price) },
      consumerLocationMatchAccuracy: credits.consumerLocationMatchAccuracy,
      ...(includeImpactPartnerDetails ? { impactPartners: wirePartners(locked, credits.impactPartnerIds) } : {}),
    },
    contribution,
    ...partnerRates,
  }
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
