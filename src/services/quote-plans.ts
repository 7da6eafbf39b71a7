// The plans of recent quote contexts (src/domain/pricing.ts, QuotePlan): what a quote locks apart from its footprint,
// equivalents and credits amounts, worked out once per organisation, context and reference data instead of per quote.
//
// Key: the organisation and the JSON of the quote's context (quoteContextOf: currency, MCC, merchant and consumer
// country and state, locale, impact type, matchConsumerLocation, the organisation's service fee rate and the quote
// date). An entry also holds the ReferenceData object it was planned from and is used only with that very object:
// ReferenceDataCache gives the same object for as long as it serves the same catalogue, exchange rates and
// organisation settings, and a new one as soon as any of them is loaded again (a catalogue import, an FX import or an
// organisation update is seen when the reference cache sees it, exactly as without plans). Tax rules are code
// (src/domain/tax.ts) and depend on the date, which is part of the key.
import { planQuote, type QuoteContext, type QuotePlan, type ReferenceData } from '../domain/pricing.js'
import { createCache, type Cache } from './cache.js'

interface Entry {
  reference: ReferenceData
  plan: QuotePlan
}

export class QuotePlans {
  private readonly entries: Cache<Entry>

  /** At most `max` plans, least recently used out first; 0 plans every quote afresh. */
  constructor(max: number) {
    this.entries = createCache({ max })
  }

  /** The plan of `context` for an organisation's quotes priced with `reference`. */
  planFor(organisationId: string, reference: ReferenceData, context: QuoteContext): QuotePlan {
    const key = `${organisationId} ${JSON.stringify(context)}`
    const hit = this.entries.get(key)
    if (hit !== undefined && hit.reference === reference) return hit.plan
    const plan = planQuote(context, reference)
    this.entries.set(key, { reference, plan })
    return plan
  }
}
