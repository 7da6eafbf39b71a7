import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentAllocation } from '../http/presenters/allocations.js'
import { sendStoredJson } from '../http/stored-json.js'
import { bearerSecurity, CurrencyCodeSchema, errorResponses, IdParamsSchema, UuidSchema } from '../http/schemas.js'
import { allocateFunds, getAllocation, reverseFundsAllocation } from '../services/allocations.js'
import type { RouteOptions } from './plugin-options.js'

const nullable = <T extends ReturnType<typeof Type.Object>>(schema: T) => Type.Union([schema, Type.Null()])

/** 1–255 printable ASCII characters; an RFC 8941 quoted string ("…") is accepted and unquoted. */
const IDEMPOTENCY_KEY = '^(?:"[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]{1,255}"|[\\x20-\\x7e]{1,255})$'

const EntryAmounts = {
  impactAmount: Type.Number({ description: 'Amount directed to the project or partner' }),
  impactSalesTaxAmount: Type.Number(),
  impactSalesTaxRate: Type.Number(),
  serviceFeeAmount: Type.Number({ description: "The service's fee" }),
  serviceFeeSalesTaxAmount: Type.Number(),
  serviceFeeSalesTaxRate: Type.Number(),
}

const AllocationSchema = Type.Object(
  {
    fundsAllocationId: UuidSchema,
    reversalId: Type.Optional(UuidSchema),
    quoteId: UuidSchema,
    currencyCode: Type.String(),
    credits: Type.Array(Type.Object({ projectId: UuidSchema, impactPartnerId: UuidSchema, ...EntryAmounts })),
    contributions: Type.Array(Type.Object({ impactPartnerId: UuidSchema, ...EntryAmounts })),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'FundsAllocation' },
)

const allocationRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireApiKey(ctx.access))
  const common = { tags: ['funds allocations'], security: bearerSecurity }
  const amount = Type.Number({
    exclusiveMinimum: 0,
    maximum: ctx.config.AMOUNT_MAX,
    description: 'Amount paid, including service fee and sales tax',
  })

  app.post(
    '/funds/allocations',
    {
      schema: {
        ...common,
        summary: 'Allocate funds from a quote (idempotent)',
        description:
          "Splits each amount with the rates the quote locked: credits across the quote's projects by their weights, " +
          'contributions equally across the chosen impact partners. Requires an `Idempotency-Key` header: the same key and ' +
          'request return the original 201 body (with `Idempotent-Replayed: true`); the same key with another request is 422; ' +
          'a duplicate still in progress is 409.',
        headers: Type.Object({
          'idempotency-key': Type.String({
            pattern: IDEMPOTENCY_KEY,
            description: '1–255 printable ASCII characters, unique per allocation',
          }),
        }),
        body: Type.Object(
          {
            organisationId: UuidSchema,
            quoteId: UuidSchema,
            currencyCode: Type.Optional(CurrencyCodeSchema),
            credits: Type.Optional(nullable(Type.Object({ amount }, { additionalProperties: false }))),
            contribution: Type.Optional(
              nullable(
                Type.Object(
                  {
                    amount,
                    impactPartnerIds: Type.Optional(Type.Array(UuidSchema, { maxItems: 50 })),
                  },
                  { additionalProperties: false },
                ),
              ),
            ),
            issueTaxReceipt: Type.Optional(Type.Boolean()),
            consumerEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: AllocationSchema, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'].replace(/^"(.*)"$/, '$1')
      const body = request.body
      const { body: payload, replayed } = await allocateFunds(
        ctx,
        principalOf(request),
        {
          organisationId: body.organisationId,
          quoteId: body.quoteId,
          currencyCode: body.currencyCode,
          credits: body.credits ?? undefined,
          contribution: body.contribution ?? undefined,
          issueTaxReceipt: body.issueTaxReceipt,
          consumerEmail: body.consumerEmail,
        },
        key,
        presentAllocation,
      )
      if (replayed) reply.header('idempotent-replayed', 'true')
      return sendStoredJson(reply, 201, payload)
    },
  )

  app.get(
    '/funds/allocations/:id',
    {
      schema: {
        ...common,
        summary: 'Get a funds allocation, exactly as it was created',
        params: IdParamsSchema,
        response: { 200: AllocationSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      return sendStoredJson(reply, 200, await getAllocation(ctx, principalOf(request), request.params.id))
    },
  )

  app.post(
    '/funds/allocations/:id/reverse',
    {
      schema: {
        ...common,
        summary: 'Reverse a funds allocation in full',
        description: 'The same entries with every amount negated and the rates unchanged, plus a `reversalId`. A second reversal is 409.',
        params: IdParamsSchema,
        response: { 201: AllocationSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      return sendStoredJson(reply, 201, await reverseFundsAllocation(ctx, principalOf(request), request.params.id, presentAllocation))
    },
  )
}

export default allocationRoutes
