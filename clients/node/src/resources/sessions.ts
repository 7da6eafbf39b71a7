import type { RequestOptions } from '../core.js'
import type { QueryParams, RequestBody } from '../types.js'
import { Resource } from './resource.js'

export type PostPurchaseSessionParams = RequestBody<'/v3/post-purchase/sessions', 'post'>
export type CheckoutSessionParams = RequestBody<'/v3/checkout/sessions', 'post'>
export type SessionReadParams = QueryParams<'/v3/post-purchase/sessions/{id}', 'get'>

export class Sessions extends Resource {
  /** POST /v3/post-purchase/sessions: a session (and its quote) for the SDK on a confirmation page. Hand the browser sessionId and clientSecret. */
  createPostPurchase(params: PostPurchaseSessionParams, options?: RequestOptions) {
    return this.core.request('post', '/v3/post-purchase/sessions', { body: params }, options)
  }

  /** POST /v3/checkout/sessions: a checkout (pre-purchase) session and its quote. */
  createCheckout(params: CheckoutSessionParams, options?: RequestOptions) {
    return this.core.request('post', '/v3/checkout/sessions', { body: params }, options)
  }

  /** GET /v3/post-purchase/sessions/:id with the API key: what the SDK renders (410 SESSION_EXPIRED after expiresAt). */
  retrievePostPurchase(sessionId: string, params: SessionReadParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/post-purchase/sessions/{id}', { params: { id: sessionId }, query: params }, options)
  }

  /** GET /v3/checkout/sessions/:id with the API key. */
  retrieveCheckout(sessionId: string, params: SessionReadParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/checkout/sessions/{id}', { params: { id: sessionId }, query: params }, options)
  }
}
