import type { RequestOptions } from '../core.js'
import type { RequestBody } from '../types.js'
import { Resource } from './resource.js'

export type CarbonQuoteParams = RequestBody<'/quotes/carbon', 'post'>
export type NatureQuoteParams = RequestBody<'/quotes/nature', 'post'>

export class Quotes extends Resource {
  /** POST /quotes/carbon: price a purchase's carbon footprint and lock it. Not retried once it may have reached the API. */
  createCarbon(params: CarbonQuoteParams, options?: RequestOptions) {
    return this.core.request('post', '/quotes/carbon', { body: params }, options)
  }

  /** POST /quotes/nature: the area of intact nature lost, and contribution rates. */
  createNature(params: NatureQuoteParams, options?: RequestOptions) {
    return this.core.request('post', '/quotes/nature', { body: params }, options)
  }

  /** GET /quotes/:id: the stored quote, as created. */
  retrieve(quoteId: string, options?: RequestOptions) {
    return this.core.request('get', '/quotes/{id}', { params: { id: quoteId } }, options)
  }

  /** GET /quotes/:id/projects: the projects the quote priced, with their locked weights. */
  listProjects(quoteId: string, options?: RequestOptions) {
    return this.core.request('get', '/quotes/{id}/projects', { params: { id: quoteId } }, options)
  }

  /** GET /quotes/:id/explain: how the quote was priced — footprint, factors, rates, fee, tax and the projects' weights. */
  explain(quoteId: string, options?: RequestOptions) {
    return this.core.request('get', '/quotes/{id}/explain', { params: { id: quoteId } }, options)
  }
}
