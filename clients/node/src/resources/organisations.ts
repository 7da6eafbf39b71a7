import type { RequestOptions } from '../core.js'
import type { RequestBody } from '../types.js'
import { Resource } from './resource.js'

export type OrganisationCreateParams = RequestBody<'/v3/organisations', 'post'>
export type OrganisationUpdateParams = RequestBody<'/v3/organisations/{id}', 'patch'>

export class Organisations extends Resource {
  /** POST /v3/organisations: a child organisation of the key's tree (inherits the parent's fee and tax liability). */
  create(params: OrganisationCreateParams, options?: RequestOptions) {
    return this.core.request('post', '/v3/organisations', { body: params }, options)
  }

  /** GET /v3/organisations/:id: the key's organisation or a descendant. */
  retrieve(organisationId: string, options?: RequestOptions) {
    return this.core.request('get', '/v3/organisations/{id}', { params: { id: organisationId } }, options)
  }

  /** PATCH /v3/organisations/:id: set allowedOrigins (null: inherit the parent's). Sets a value, so it is safe to retry. */
  update(organisationId: string, params: OrganisationUpdateParams, options?: RequestOptions) {
    return this.core.request('patch', '/v3/organisations/{id}', { params: { id: organisationId }, body: params }, options)
  }

  /** GET /v3/organisations: the key's organisation and the tree below it. */
  list(options?: RequestOptions) {
    return this.core.request('get', '/v3/organisations', {}, options)
  }

  /**
   * POST /v3/organisations/:id/deactivate: a descendant's keys and sessions stop working until it is reactivated.
   * Asking for the status it already has changes nothing, so it is retried like a read.
   */
  deactivate(organisationId: string, options?: RequestOptions) {
    return this.core.request('post', '/v3/organisations/{id}/deactivate', { params: { id: organisationId }, retry: 'idempotent' }, options)
  }

  /** POST /v3/organisations/:id/reactivate: brings a deactivated descendant back as it was (retried like a read). */
  reactivate(organisationId: string, options?: RequestOptions) {
    return this.core.request('post', '/v3/organisations/{id}/reactivate', { params: { id: organisationId }, retry: 'idempotent' }, options)
  }
}
