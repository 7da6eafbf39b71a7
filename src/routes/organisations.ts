import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentOrganisation } from '../http/presenters/organisations.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import { CreateOrganisationBodySchema, OrganisationSchema, UpdateOrganisationBodySchema } from '../http/schemas/organisations.js'
import { createChildOrganisation, getOrganisation, updateOrganisation, type OrganisationDeps } from '../services/organisations.js'

const organisationRoutes: FastifyPluginAsyncTypebox<{ deps: OrganisationDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['organisations'], security: bearerSecurity }

  app.post(
    '/organisations',
    {
      schema: {
        ...common,
        summary: 'Create a child organisation',
        description:
          "Creates an organisation under `parentOrganisationId`, which must be the key's organisation or one of its descendants. The child inherits the parent's service fee and tax liability, and its allowed origins unless `allowedOrigins` is given. `relativeProfitShare` (default 0) is its share of what the parent receives of every service fee; `billing` says how its profit share is billed (default: in its own currency, taxed where its address is).",
        body: CreateOrganisationBodySchema,
        response: {
          201: OrganisationSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'UNKNOWN_COUNTRY',
            'UNSUPPORTED_CURRENCY',
            'INVALID_MCC',
            'INVALID_ALLOWED_ORIGIN',
            'TOO_MANY_ALLOWED_ORIGINS',
            'INVALID_PROFIT_SHARE',
            'UNSUPPORTED_BILLING_CURRENCY',
            'UNKNOWN_SUBDIVISION',
            'UNAUTHORIZED',
            'FORBIDDEN',
            'NOT_FOUND',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
          ),
        },
      },
    },
    async (request, reply) => {
      const { parentOrganisationId, ...fields } = request.body
      const organisation = await createChildOrganisation(deps, principalOf(request), { ...fields, parentId: parentOrganisationId })
      return reply.code(201).send(presentOrganisation(organisation))
    },
  )

  app.get(
    '/organisations/:id',
    {
      schema: {
        ...common,
        summary: "Get an organisation (the key's own or a descendant)",
        params: IdParamsSchema,
        response: { 200: OrganisationSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => presentOrganisation(await getOrganisation(deps, principalOf(request), request.params.id)),
  )

  app.patch(
    '/organisations/:id',
    {
      schema: {
        ...common,
        summary: "Update an organisation's allowed origins, billing details or profit share (the key's own or a descendant)",
        description:
          "`allowedOrigins`: the web origins whose pages may read the organisation's sessions with the browser SDK (CORS on " +
          "the session reads); `null` makes the organisation inherit its nearest ancestor's list again, `[]` allows no " +
          'origin. `billing`: how its profit share is billed (`null`: in its own currency). `relativeProfitShare`: its share ' +
          "of what its parent receives of every service fee — set by the parent's tree only, so a key cannot set its own " +
          "organisation's (PROFIT_SHARE_SET_BY_PARENT). Pricing settings are the operator's, and the identity fields are fixed. " +
          'Other processes follow within AUTH_CACHE_TTL_MS (origins) or CATALOGUE_CACHE_TTL_MS (profit share).',
        params: IdParamsSchema,
        body: UpdateOrganisationBodySchema,
        response: {
          200: OrganisationSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'INVALID_ALLOWED_ORIGIN',
            'TOO_MANY_ALLOWED_ORIGINS',
            'INVALID_PROFIT_SHARE',
            'UNSUPPORTED_BILLING_CURRENCY',
            'UNKNOWN_COUNTRY',
            'UNKNOWN_SUBDIVISION',
            'UNAUTHORIZED',
            'PROFIT_SHARE_SET_BY_PARENT',
            'NOT_FOUND',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
          ),
        },
      },
    },
    async (request) => presentOrganisation(await updateOrganisation(deps, principalOf(request), request.params.id, request.body)),
  )
}

export default organisationRoutes
