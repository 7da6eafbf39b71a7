import type { RequestOptions } from '../core.js'
import type { QueryParams, RequestBody } from '../types.js'
import { Resource } from './resource.js'

export type ApiKeyCreateParams = RequestBody<'/v3/api-keys', 'post'>
export type ApiKeyListParams = QueryParams<'/v3/api-keys', 'get'>
export type ApiKeyRotateParams = RequestBody<'/v3/api-keys/{id}/rotate', 'post'>

export class ApiKeys extends Resource {
  /** POST /v3/api-keys: a new key (its secret `apiKey` is shown once). Never retried once it may have reached the API. */
  create(params: ApiKeyCreateParams, options?: RequestOptions) {
    return this.core.request('post', '/v3/api-keys', { body: params }, options)
  }

  /** GET /v3/api-keys: the keys of an organisation of the tree (default: the key's own), without secrets. */
  list(params: ApiKeyListParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/api-keys', { query: params }, options)
  }

  /** POST /v3/api-keys/:id/rotate: a replacement key (shown once); the old one works until its new expiry. */
  rotate(apiKeyId: string, params: ApiKeyRotateParams = {}, options?: RequestOptions) {
    return this.core.request('post', '/v3/api-keys/{id}/rotate', { params: { id: apiKeyId }, body: params }, options)
  }

  /** POST /v3/api-keys/:id/revoke: revoke now. Retried like a read (a second revoke changes nothing: 409 API_KEY_ALREADY_REVOKED). */
  revoke(apiKeyId: string, options?: RequestOptions) {
    return this.core.request('post', '/v3/api-keys/{id}/revoke', { params: { id: apiKeyId }, retry: 'idempotent' }, options)
  }
}
