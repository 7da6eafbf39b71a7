import type { RequestOptions } from '../core.js'
import type { QueryParams } from '../types.js'
import { Resource } from './resource.js'

type Paged<Q> = Omit<Q, 'limit'> & { limit?: number }
export type ImpactPartnerListParams = Paged<QueryParams<'/v3/impact-partners', 'get'>>
export type CatalogueProjectListParams = Paged<QueryParams<'/v3/impact-partners/projects', 'get'>>

/**
 * The impact catalogue: the partners and projects Canopy allocates to. Both lists answer a plain array (ekko's
 * shape, at most `limit` items, default 100): the next page starts after the last item's id (`startingAfter`).
 */
export class ImpactPartners extends Resource {
  /** GET /v3/impact-partners: the catalogue's partners. */
  list(params: ImpactPartnerListParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/impact-partners', { query: params }, options)
  }

  /** GET /v3/impact-partners/projects: the catalogue's projects (or one, with projectId). */
  listProjects(params: CatalogueProjectListParams = {}, options?: RequestOptions) {
    return this.core.request('get', '/v3/impact-partners/projects', { query: params }, options)
  }
}
