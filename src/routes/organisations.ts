import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentOrganisation } from '../http/presenters/organisations.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import { CreateOrganisationBodySchema, OrganisationSchema } from '../http/schemas/organisations.js'
import { createChildOrganisation, getOrganisation, type OrganisationDeps } from '../services/organisations.js'

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
          "Creates an organisation under `parentOrganisationId`, which must be the key's organisation or one of its descendants. The child inherits the parent's service fee and tax liability.",
        body: CreateOrganisationBodySchema,
        response: {
          201: OrganisationSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'UNKNOWN_COUNTRY',
            'UNSUPPORTED_CURRENCY',
            'INVALID_MCC',
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
}

export default organisationRoutes
