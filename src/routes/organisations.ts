import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import {
  AddressSchema,
  bearerSecurity,
  CurrencyCodeSchema,
  errorResponses,
  IdParamsSchema,
  MccSchema,
  text,
  UuidSchema,
} from '../http/schemas.js'
import { createChildOrganisation, getOrganisation, type Organisation } from '../services/organisations.js'
import type { RouteOptions } from './plugin-options.js'

const CreateOrganisationBodySchema = Type.Object(
  {
    parentOrganisationId: UuidSchema,
    tradingName: text(200),
    legalName: text(200),
    organisationReference: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
    address: AddressSchema,
    currencyCode: CurrencyCodeSchema,
    website: Type.Optional(Type.Union([Type.String({ format: 'uri', maxLength: 500 }), Type.Null()])),
    mcc: Type.Optional(Type.Union([MccSchema, Type.Null()])),
  },
  { additionalProperties: false },
)

const OrganisationSchema = Type.Object(
  {
    organisationId: UuidSchema,
    parentOrganisationId: Type.Union([UuidSchema, Type.Null()]),
    organisationReference: Type.Union([Type.String(), Type.Null()]),
    tradingName: Type.String(),
    legalName: Type.String(),
    address: Type.Object({
      line1: Type.Optional(Type.String()),
      line2: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      line3: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      city: Type.Optional(Type.String()),
      postalCode: Type.Optional(Type.String()),
      state: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      countryCode: Type.String(),
    }),
    currencyCode: Type.String(),
    website: Type.Union([Type.String(), Type.Null()]),
    mcc: Type.Union([Type.String(), Type.Null()]),
    serviceFeePercentage: Type.Number({ description: 'Service fee as a proportion of the impact amount (0.2 = 20%)' }),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    status: Type.Object({ value: Type.Union([Type.Literal('active'), Type.Literal('inactive')]), message: Type.Null() }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Organisation' },
)

const present = (org: Organisation): Static<typeof OrganisationSchema> => ({
  organisationId: org.organisationId,
  parentOrganisationId: org.parentOrganisationId,
  organisationReference: org.organisationReference,
  tradingName: org.tradingName,
  legalName: org.legalName,
  address: org.address,
  currencyCode: org.currencyCode,
  website: org.website,
  mcc: org.mcc,
  serviceFeePercentage: Number(org.serviceFeeRate),
  taxLiability: org.taxLiability,
  status: { value: org.status, message: null },
  createdAt: org.createdAt,
})

const organisationRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireApiKey(ctx.access))
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
        response: { 201: OrganisationSchema, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
    },
    async (request, reply) => {
      const body = request.body
      const org = await createChildOrganisation(
        ctx.database.db,
        ctx.access,
        principalOf(request),
        {
          parentId: body.parentOrganisationId,
          tradingName: body.tradingName,
          legalName: body.legalName,
          organisationReference: body.organisationReference,
          address: body.address,
          currencyCode: body.currencyCode,
          website: body.website,
          mcc: body.mcc,
        },
        ctx.clock(),
      )
      return reply.code(201).send(present(org))
    },
  )

  app.get(
    '/organisations/:id',
    {
      schema: {
        ...common,
        summary: "Get an organisation (the key's own or a descendant)",
        params: IdParamsSchema,
        response: { 200: OrganisationSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => present(await getOrganisation(ctx.database.db, ctx.access, principalOf(request), request.params.id)),
  )
}

export default organisationRoutes
