import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentOrganisation } from '../http/presenters/organisations.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import {
  CreateOrganisationBodySchema,
  OrganisationSchema,
  OrganisationTreeSchema,
  UpdateOrganisationBodySchema,
} from '../http/schemas/organisations.js'
import {
  createChildOrganisation,
  getOrganisation,
  listOrganisationTree,
  setOrganisationActive,
  updateOrganisation,
  type OrganisationDeps,
} from '../services/organisations.js'

const organisationRoutes: FastifyPluginAsyncTypebox<{ deps: OrganisationDeps }> = async (app, { deps }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['organisations'], security: bearerSecurity }

  app.post(
    '/organisations',
    {
      config: { permission: 'organisations:manage' },
      schema: {
        ...common,
        summary: 'Create a child organisation',
        description:
          "Creates an organisation under `parentOrganisationId`, which must be the key's organisation or one of its descendants. The child inherits the parent's service fee and tax liability, and its allowed origins and IP allowlist unless `allowedOrigins` or `ipAllowlist` is given. `relativeProfitShare` (default 0) is its share of what the parent receives of every service fee; `billing` says how its profit share is billed (default: in its own currency, taxed where its address is).",
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
            'INVALID_IP_ALLOWLIST_ENTRY',
            'UNAUTHORIZED',
            'FORBIDDEN',
            'IP_NOT_ALLOWED',
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
    '/organisations',
    {
      config: { permission: 'organisations:read' },
      schema: {
        ...common,
        summary: "List the caller's organisation tree",
        description:
          "The caller's organisation and all its descendants, deactivated ones included (`status.value`), parents before " +
          'their children, each with its `depth` below the caller’s organisation.',
        response: { 200: OrganisationTreeSchema, ...errorResponses('UNAUTHORIZED', 'IP_NOT_ALLOWED') },
      },
    },
    async (request) => ({
      data: (await listOrganisationTree(deps, principalOf(request))).map((org) => ({ ...presentOrganisation(org), depth: org.depth })),
    }),
  )

  app.get(
    '/organisations/:id',
    {
      config: { permission: 'organisations:read' },
      schema: {
        ...common,
        summary: "Get an organisation (the key's own or a descendant)",
        params: IdParamsSchema,
        response: { 200: OrganisationSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'IP_NOT_ALLOWED', 'NOT_FOUND') },
      },
    },
    async (request) => presentOrganisation(await getOrganisation(deps, principalOf(request), request.params.id)),
  )

  app.patch(
    '/organisations/:id',
    {
      config: { permission: 'organisations:configure' },
      schema: {
        ...common,
        summary: "Update an organisation's allowed origins, IP allowlist, second-factor rule, billing details or profit share",
        description:
          "`allowedOrigins`: the web origins whose pages may read the organisation's sessions with the browser SDK (CORS on the " +
          "session reads). `ipAllowlist`: the addresses its API keys (and its descendants' without a list of their own) may be " +
          'used from, with an on/off switch. `requireSecondFactor` (admins and API keys): its Hub users must sign in with ' +
          'TOTP. `billing` (admins and API keys): how its profit share is billed (`null`: in its own currency). ' +
          '`relativeProfitShare` (admins and API keys): its share of what its parent receives of every service fee — set by ' +
          "the parent's tree only, so a caller cannot set its own organisation's (PROFIT_SHARE_SET_BY_PARENT). Pricing " +
          "settings are the operator's, and the identity fields are fixed. `null` makes a list inherit its nearest " +
          "ancestor's again; `[]` allows no origin (and stops inheriting). Every change is in the audit log. Other processes " +
          'follow within AUTH_CACHE_TTL_MS (origins, allowlist) or CATALOGUE_CACHE_TTL_MS (profit share).',
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
            'INVALID_IP_ALLOWLIST_ENTRY',
            'UNAUTHORIZED',
            'IP_NOT_ALLOWED',
            'PERMISSION_DENIED',
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

  for (const [action, active] of [
    ['deactivate', false],
    ['reactivate', true],
  ] as const) {
    app.post(
      `/organisations/:id/${action}`,
      {
        config: { permission: 'organisations:manage' },
        schema: {
          ...common,
          summary: active ? 'Reactivate a descendant organisation' : 'Deactivate a descendant organisation',
          description: active
            ? 'The organisation and its subtree work again as they were before deactivation (its keys, its users).'
            : 'The organisation and everything below it stop: their API keys answer 401 and their Hub users are signed out ' +
              '(in other processes within AUTH_CACHE_TTL_MS). Nothing is deleted; reactivate to undo. An organisation cannot ' +
              'deactivate itself (OWN_ORGANISATION).',
          params: IdParamsSchema,
          response: {
            200: OrganisationSchema,
            ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'IP_NOT_ALLOWED', 'PERMISSION_DENIED', 'NOT_FOUND', 'OWN_ORGANISATION'),
          },
        },
      },
      async (request) => presentOrganisation(await setOrganisationActive(deps, principalOf(request), request.params.id, active)),
    )
  }
}

export default organisationRoutes
