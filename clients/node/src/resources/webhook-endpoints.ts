import type { RequestOptions } from '../core.js'
import { PagePromise } from '../pagination.js'
import type { QueryParams, RequestBody, WebhookDelivery, WebhookDeliveryPage } from '../types.js'
import { Resource } from './resource.js'

export type WebhookEndpointCreateParams = RequestBody<'/v3/webhook-endpoints', 'post'>
export type WebhookEndpointUpdateParams = RequestBody<'/v3/webhook-endpoints/{id}', 'patch'>
export type WebhookEndpointListParams = QueryParams<'/v3/webhook-endpoints', 'get'>
export type WebhookSecretRotateParams = RequestBody<'/v3/webhook-endpoints/{id}/rotate-secret', 'post'>
/** status, startingAfter, and limit: the page size (1–100, default 20). */
export type WebhookDeliveryListParams = Omit<QueryParams<'/v3/webhook-endpoints/{id}/deliveries', 'get'>, 'limit'> & { limit?: number }
export type WebhookRecoverParams = RequestBody<'/v3/webhook-endpoints/{id}/recover', 'post'>

export class WebhookEndpoints extends Resource {
  /** POST /v3/webhook-endpoints: register an endpoint; `secret` (whsec_…) is shown once. Never retried once it may have reached the API. */
  create(params: WebhookEndpointCreateParams, options?: RequestOptions) {
    return this.core.request('post', '/v3/webhook-endpoints', { body: params }, options)
  }

  /** GET /v3/webhook-endpoints: the tree's endpoints (or one organisation's). */
  list(params: WebhookEndpointListParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/webhook-endpoints', { query: params }, options)
  }

  retrieve(endpointId: string, options?: RequestOptions) {
    return this.core.request('get', '/v3/webhook-endpoints/{id}', { params: { id: endpointId } }, options)
  }

  /** PATCH: url, enabledEvents, format, description, status ("enabled" also clears the failing streak). */
  update(endpointId: string, params: WebhookEndpointUpdateParams, options?: RequestOptions) {
    return this.core.request('patch', '/v3/webhook-endpoints/{id}', { params: { id: endpointId }, body: params }, options)
  }

  /** DELETE: the endpoint receives nothing more. */
  delete(endpointId: string, options?: RequestOptions) {
    return this.core.request('delete', '/v3/webhook-endpoints/{id}', { params: { id: endpointId } }, options)
  }

  /** POST …/rotate-secret: a new secret (shown once); the old one keeps signing for gracePeriodSeconds (default 24 h). */
  rotateSecret(endpointId: string, params: WebhookSecretRotateParams = {}, options?: RequestOptions) {
    return this.core.request('post', '/v3/webhook-endpoints/{id}/rotate-secret', { params: { id: endpointId }, body: params }, options)
  }

  /** POST …/test: queue a `webhook_endpoint.test` event to this endpoint. */
  test(endpointId: string, options?: RequestOptions) {
    return this.core.request('post', '/v3/webhook-endpoints/{id}/test', { params: { id: endpointId } }, options)
  }

  /** GET …/deliveries, newest first, with every attempt; iterate with `for await` to walk every page. */
  listDeliveries(
    endpointId: string,
    params: WebhookDeliveryListParams = {},
    options?: RequestOptions,
  ): PagePromise<WebhookDelivery, WebhookDeliveryPage> {
    return new PagePromise<WebhookDelivery, WebhookDeliveryPage>({
      fetch: (cursor) =>
        this.core.request(
          'get',
          '/v3/webhook-endpoints/{id}/deliveries',
          { params: { id: endpointId }, query: cursor === undefined ? params : { ...params, startingAfter: cursor } },
          options,
        ),
      next: (page) => page.data[page.data.length - 1]?.id,
    })
  }

  /** POST /v3/webhook-endpoints/deliveries/:deliveryId/retry: one attempt now. */
  retryDelivery(deliveryId: string, options?: RequestOptions) {
    return this.core.request('post', '/v3/webhook-endpoints/deliveries/{deliveryId}/retry', { params: { deliveryId } }, options)
  }

  /** POST …/recover: put every failed delivery since `since` back on the schedule. Retried like a read (a repeat finds nothing new to recover). */
  recover(endpointId: string, params: WebhookRecoverParams, options?: RequestOptions) {
    return this.core.request(
      'post',
      '/v3/webhook-endpoints/{id}/recover',
      { params: { id: endpointId }, body: params, retry: 'idempotent' },
      options,
    )
  }
}
