import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentCataloguePartner, presentCatalogueProject } from '../http/presenters/impact-partners.js'
import { bearerSecurity, errorResponses } from '../http/schemas/common.js'
import {
  CataloguePartnerSchema,
  CatalogueProjectSchema,
  ImpactPartnerProjectsQuerySchema,
  ImpactPartnersQuerySchema,
} from '../http/schemas/impact-partners.js'
import { listImpactPartnerProjects, listImpactPartners, type CatalogueDeps, type CataloguePageResult } from '../services/impact-partners.js'

/**
 * ekko answers these with a bare JSON array, so paging is in an RFC 8288 Link header: rel="next" (after the last
 * id) when more follow a forward page, rel="prev" (before the first id) when more precede a backward one.
 */
function linkPage<T extends { id: string }>(
  reply: FastifyReply,
  path: string,
  query: Record<string, string | undefined>,
  page: CataloguePageResult<T>,
): void {
  const edge = page.direction === 'forward' ? page.data.at(-1) : page.data[0]
  if (!page.hasMore || edge === undefined) return
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && key !== 'startingAfter' && key !== 'endingBefore') params.set(key, value)
  }
  params.set(page.direction === 'forward' ? 'startingAfter' : 'endingBefore', edge.id)
  reply.header('link', `<${path}?${params.toString()}>; rel="${page.direction === 'forward' ? 'next' : 'prev'}"`)
}

const catalogueRoutes: FastifyPluginAsyncTypebox<{ deps: CatalogueDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['catalogue'], security: bearerSecurity }
  const errors = errorResponses('BAD_REQUEST', 'INVALID_CURSOR', 'UNAUTHORIZED')
  const description =
    "A bare JSON array (as ekko), in id order; the partners are those the key's organisation may use (its own list, else its " +
    "nearest ancestor's, else all), active only. Pages of `limit` (default 100): when more follow, a `Link` header gives the next " +
    'page (`rel="next"`, or `rel="prev"` when paging back with `endingBefore`).'

  app.get(
    '/impact-partners',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: "List the impact partners of the key's tree",
        description,
        querystring: ImpactPartnersQuerySchema,
        response: { 200: Type.Array(CataloguePartnerSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { limit, ...query } = request.query
      const page = await listImpactPartners(deps, principalOf(request), {
        ...query,
        limit: limit === undefined ? undefined : Number(limit),
      })
      linkPage(reply, '/v3/impact-partners', request.query, page)
      return page.data.map(presentCataloguePartner)
    },
  )

  app.get(
    '/impact-partners/projects',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: "List the projects of the key's tree's impact partners (optionally one project)",
        description: `${description} A project is shown as \`GET /quotes/:id/projects\` shows it, without the quote's weight, its unit price in its catalogue currency.`,
        querystring: ImpactPartnerProjectsQuerySchema,
        response: { 200: Type.Array(CatalogueProjectSchema), ...errors },
      },
    },
    async (request, reply) => {
      const { limit, ...query } = request.query
      const page = await listImpactPartnerProjects(deps, principalOf(request), {
        ...query,
        limit: limit === undefined ? undefined : Number(limit),
      })
      linkPage(reply, '/v3/impact-partners/projects', request.query, page)
      return page.data.map(presentCatalogueProject)
    },
  )
}

export default catalogueRoutes
