// Stored quote → wire JSON (spec 2.2). Deterministic: GET returns exactly what creation returned.
import type { Static } from '@sinclair/typebox'
import { describeEquivalents, resolveLocale } from '../../domain/equivalents.js'
import { displayRatesOf } from '../../domain/pricing.js'
import type { EffectiveRates, LockedQuote, PartnerImages, QuotedProject, SectionTaxRates } from '../../domain/types.js'
import type { StoredQuote } from '../../services/quotes.js'
import type { CarbonQuoteSchema, NatureQuoteSchema, QuoteProjectSchema } from '../quote-schemas.js'

type WireRates = { impact: number; impactTax: number; serviceFee: number; serviceFeeTax: number }

const toNumbers = (rates: EffectiveRates): WireRates => ({
  impact: Number(rates.impact),
  impactTax: Number(rates.impactTax),
  serviceFee: Number(rates.serviceFee),
  serviceFeeTax: Number(rates.serviceFeeTax),
})

export const wireRates = (taxRates: SectionTaxRates): WireRates => toNumbers(displayRatesOf(taxRates))

const wireImages = (images: PartnerImages) => ({
  ...(images.logos ? { logos: images.logos.map((i) => ({ ...i })) } : {}),
  ...(images.thumbnails ? { thumbnails: images.thumbnails.map((i) => ({ ...i })) } : {}),
  ...(images.backgrounds ? { backgrounds: images.backgrounds.map((i) => ({ ...i })) } : {}),
})

export function wirePartners(locked: LockedQuote, ids: readonly string[]) {
  const byId = new Map(locked.partners.map((p) => [p.id, p]))
  return ids.flatMap((id) => {
    const partner = byId.get(id)
    return partner
      ? [{ id: partner.id, name: partner.name, shortDescription: partner.shortDescription, images: wireImages(partner.images) }]
      : []
  })
}

export const wireEquivalents = (locked: Pick<LockedQuote, 'equivalents'>) =>
  locked.equivalents.map((e) => ({ key: e.key, value: e.value, description: e.description }))

export type CarbonQuoteBody = Static<typeof CarbonQuoteSchema>
export type NatureQuoteBody = Static<typeof NatureQuoteSchema>

export function presentQuote(quote: StoredQuote): CarbonQuoteBody | NatureQuoteBody {
  const { locked } = quote
  const { includeImpactPartnerDetails, includeImpactPartnerRates } = quote.request.responseOptions
  const contributionRates = wireRates(locked.contribution.taxRates)
  const contribution = {
    effectiveRates: contributionRates,
    ...(includeImpactPartnerDetails ? { impactPartners: wirePartners(locked, locked.contribution.impactPartnerIds) } : {}),
  }
  const creditsRates = locked.credits ? wireRates(locked.credits.taxRates) : undefined
  const partnerRates = includeImpactPartnerRates
    ? {
        partnerRates: {
          // Every partner of a section shares the section's rates (domain partnerRatesOf).
          credits: (locked.credits?.impactPartnerIds ?? []).map((partnerId) => ({ partnerId, rates: creditsRates ?? contributionRates })),
          contribution: locked.contribution.impactPartnerIds.map((partnerId) => ({ partnerId, rates: contributionRates })),
        },
      }
    : {}
  const header = { quoteId: quote.id, currencyCode: quote.currencyCode, createdAt: quote.createdAt.toISOString() }
  if (locked.footprint.kind === 'nature' || !locked.credits || !creditsRates) {
    const area = locked.footprint.kind === 'nature' ? locked.footprint : { areaSquareMetres: '0', areaSquareFeet: '0' }
    return {
      ...header,
      footprint: {
        areaSquareMetres: Number(area.areaSquareMetres),
        areaSquareFeet: Number(area.areaSquareFeet),
        equivalents: wireEquivalents(locked),
      },
      contribution,
      ...partnerRates,
    }
  }
  const { credits } = locked
  return {
    ...header,
    footprint: {
      co2eGrams: Number(locked.footprint.co2eGrams),
      co2eOunces: Number(locked.footprint.co2eOunces),
      equivalents: wireEquivalents(locked),
    },
    credits: {
      amounts: {
        total: Number(credits.amounts.total),
        impact: Number(credits.amounts.impact),
        impactTax: Number(credits.amounts.impactTax),
        serviceFee: Number(credits.amounts.serviceFee),
        serviceFeeTax: Number(credits.amounts.serviceFeeTax),
      },
      effectiveRates: creditsRates,
      unit: { description: credits.unit.description, price: Number(credits.unit.price) },
      consumerLocationMatchAccuracy: credits.consumerLocationMatchAccuracy,
      ...(includeImpactPartnerDetails ? { impactPartners: wirePartners(locked, credits.impactPartnerIds) } : {}),
    },
    contribution,
    ...partnerRates,
  }
}

export function presentQuoteProjects(currencyCode: string, projects: readonly QuotedProject[]): Static<typeof QuoteProjectSchema>[] {
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

export function presentCarbonQuote(quote: StoredQuote): CarbonQuoteBody {
  const body = presentQuote(quote)
  if (!('credits' in body)) throw new Error(`quote ${quote.id} is not a carbon quote`)
  return body
}

export function presentNatureQuote(quote: StoredQuote): NatureQuoteBody {
  const body = presentQuote(quote)
  if ('credits' in body) throw new Error(`quote ${quote.id} is not a nature quote`)
  return body
}

/**
 * A quote as a frontend SDK renders it (sessions): impact partners always included, no partnerRates,
 * equivalents re-localised for `requestedLocale` (after fallback) or else in the quote's own locale.
 */
export function presentSdkQuote(quote: StoredQuote, requestedLocale: string | undefined) {
  const body = presentQuote({
    ...quote,
    request: { ...quote.request, responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: false } },
  })
  const { locked } = quote
  const locale = requestedLocale === undefined ? locked.locale : resolveLocale(requestedLocale)
  const equivalents =
    locale === locked.locale ? body.footprint.equivalents : wireEquivalents({ equivalents: describeEquivalents(locked.footprint, locale) })
  const contribution = { effectiveRates: body.contribution.effectiveRates, impactPartners: body.contribution.impactPartners ?? [] }
  if ('credits' in body) {
    return {
      currencyCode: body.currencyCode,
      locale,
      footprint: { ...body.footprint, equivalents },
      credits: { ...body.credits, impactPartners: body.credits.impactPartners ?? [] },
      contribution,
    }
  }
  return { currencyCode: body.currencyCode, locale, footprint: { ...body.footprint, equivalents }, contribution }
}
