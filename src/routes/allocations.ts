import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply } from 'fastify'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentAllocation } from '../http/presenters/allocations.js'
import {
  AllocationHeadersSchema,
  allocationBodySchema,
  AllocationSchema,
  checkReversalBody,
  idempotencyKeyOf,
} from '../http/schemas/allocations.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import type { AmountLimits } from '../http/schemas/quotes.js'
import { allocateFunds, getAllocation, reverseFundsAllocation, type AllocationDeps, type AllocationView } from '../services/allocations.js'

/**
 * The 201 body of each replayed allocation object, as the route's serializer wrote it. The allocation store answers the
 * replays of a key with the object it keeps for it (an allocation never changes), so the next replay sends these bytes
 * again instead of presenting and serialising it anew. Only replayed ones: keeping every new allocation's body for a
 * replay that rarely comes would hold kilobytes per allocation past the young generation (a higher peak RSS). Weakly
 * held, so a body goes with its allocation.
 */
const replayedBodies = new WeakMap<AllocationView, string>()

const allocationRoutes: FastifyPluginAsyncTypebox<{ deps: AllocationDeps; limits: AmountLimits }> = async (app, { deps, limits }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['funds allocations'], security: bearerSecurity }

  app.post(
    '/funds/allocations',
    {
      config: { permission: 'transactions:write' },
      schema: {
        ...common,
        summary: 'Allocate funds from a quote (idempotent)',
        description:
          "Splits each amount with the rates the quote locked: credits across the quote's projects by their weights, " +
          'contributions equally across the chosen impact partners. Requires an `Idempotency-Key` header: the same key and ' +
          'request return the original 201 body (with `Idempotent-Replayed: true`); the same key with another request is 422; ' +
          'a duplicate still in progress is 409.',
        headers: AllocationHeadersSchema,
        body: allocationBodySchema(limits),
        response: {
          201: AllocationSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'CREDITS_OR_CONTRIBUTION_REQUIRED',
            'CONSUMER_EMAIL_REQUIRED',
            'TAX_RECEIPT_REQUIRES_CONTRIBUTION',
            'CURRENCY_MISMATCH',
            'AMOUNT_PRECISION',
            'AMOUNT_OUT_OF_RANGE',
            'NO_CREDITS_IN_QUOTE',
            'IMPACT_PARTNER_NOT_FOUND',
            'UNAUTHORIZED',
            'FORBIDDEN',
            'NOT_FOUND',
            'IDEMPOTENCY_KEY_IN_USE',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            'IDEMPOTENCY_KEY_REUSED',
            'NO_CONTRIBUTION_PARTNERS',
          ),
        },
      },
    },
    async (request, reply) => {
      const { body } = request
      const { allocation, replayed } = await allocateFunds(
        deps,
        principalOf(request),
        { ...body, credits: body.credits ?? undefined, contribution: body.contribution ?? undefined },
        idempotencyKeyOf(request.headers['idempotency-key']),
      )
      if (!replayed) return reply.code(201).send(presentAllocation(allocation))
      reply.header('idempotent-replayed', 'true').code(201)
      let json = replayedBodies.get(allocation)
      if (json === undefined) {
        json = reply.serialize(presentAllocation(allocation)) as string
        replayedBodies.set(allocation, json)
      }
      // Already serialized: a string with a JSON content type is sent as it is (the typed reply expects the object).
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(json)
    },
  )

  app.get(
    '/funds/allocations/:id',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Get a funds allocation, exactly as it was created',
        params: IdParamsSchema,
        response: { 200: AllocationSchema, ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => presentAllocation(await getAllocation(deps, principalOf(request), request.params.id)),
  )

  app.post(
    '/funds/allocations/:id/reverse',
    {
      config: { permission: 'transactions:write' },
      schema: {
        ...common,
        summary: 'Reverse a funds allocation in full',
        description:
          'The same entries with every amount negated and the rates unchanged, plus a `reversalId`. A second reversal is 409. ' +
          'Takes no body (an empty JSON object is accepted): partial reversals are not supported, and an `amount` is refused.',
        params: IdParamsSchema,
        response: {
          201: AllocationSchema,
          ...errorResponses(
            'BAD_REQUEST',
            'PARTIAL_REVERSAL_NOT_SUPPORTED',
            'UNAUTHORIZED',
            'NOT_FOUND',
            'ALREADY_REVERSED',
            'REQUEST_ENTITY_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
          ),
        },
      },
      preValidation: async (request) => checkReversalBody(request.body),
    },
    async (request, reply) =>
      reply.code(201).send(presentAllocation(await reverseFundsAllocation(deps, principalOf(request), request.params.id))),
  )
}

export default allocationRoutes
