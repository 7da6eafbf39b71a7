// The catalogue as ekko's catalogue endpoints show it (GET /v3/impact-partners, GET /v3/impact-partners/projects):
// the active impact partners and projects the caller's organisation may use (its own partner list, else its nearest
// ancestor's, else all), in keyset pages by id.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findAllowedPartnerIds, findCataloguePartners, findCatalogueProjects, type CataloguePartner } from '../db/repositories/catalogue.js'
import type { CreditProject } from '../domain/types.js'
import { AppError } from '../errors.js'
import type { AccessResolver, Principal } from './access.js'

export interface CatalogueDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
}

export interface CatalogueQuery {
  limit?: number | undefined
  startingAfter?: string | undefined
  endingBefore?: string | undefined
}

/** One page and whether more follow in the direction read (the route turns that into a Link header). */
export interface CataloguePageResult<T> {
  data: T[]
  hasMore: boolean
  direction: 'forward' | 'backward'
}

export const CATALOGUE_DEFAULT_LIMIT = 100

async function readPage<T>(
  deps: CatalogueDeps,
  principal: Principal,
  query: CatalogueQuery,
  read: (page: { allowedPartnerIds: string[] | undefined; after?: string; before?: string; limit: number }) => Promise<T[]>,
): Promise<CataloguePageResult<T>> {
  if (query.startingAfter !== undefined && query.endingBefore !== undefined) {
    throw new AppError('INVALID_CURSOR', 'send at most one of startingAfter and endingBefore', [
      { path: '/startingAfter', message: 'cannot be sent with endingBefore' },
      { path: '/endingBefore', message: 'cannot be sent with startingAfter' },
    ])
  }
  const limit = query.limit ?? CATALOGUE_DEFAULT_LIMIT
  const rows = await read({
    allowedPartnerIds: await findAllowedPartnerIds(deps.db, principal.organisationId),
    ...(query.startingAfter === undefined ? {} : { after: query.startingAfter }),
    ...(query.endingBefore === undefined ? {} : { before: query.endingBefore }),
    limit: limit + 1,
  })
  const direction = query.endingBefore === undefined ? 'forward' : 'backward'
  const data = rows.slice(0, limit)
  if (direction === 'backward') data.reverse()
  return { data, hasMore: rows.length > limit, direction }
}

/** The impact partners the caller's organisation may use, by id. */
export function listImpactPartners(
  deps: CatalogueDeps,
  principal: Principal,
  query: CatalogueQuery,
): Promise<CataloguePageResult<CataloguePartner>> {
  return readPage(deps, principal, query, (page) => findCataloguePartners(deps.db, page))
}

/** The projects of those partners, by id; with projectId, that project alone (an empty page when it is not one of them). */
export function listImpactPartnerProjects(
  deps: CatalogueDeps,
  principal: Principal,
  query: CatalogueQuery & { projectId?: string | undefined },
): Promise<CataloguePageResult<CreditProject>> {
  return readPage(deps, principal, query, (page) => findCatalogueProjects(deps.db, { ...page, projectId: query.projectId }))
}
