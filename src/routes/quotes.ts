import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type, type Static } from '@sinclair/typebox'
import type { QuoteRequestRecord } from '../db/database.js'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentCarbonQuote, presentNatureQuote, presentQuote, presentQuoteProjects } from '../http/presenters/quotes.js'
import { CarbonQuoteSchema, FLORIST_EXAMPLE, NatureQuoteSchema, QuoteProjectSchema, quoteBodySchema } from '../http/quote-schemas.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas.js'
import { createQuote, getQuote, quoteProjects } from '../services/quotes.js'
import type { RouteOptions } from './plugin-options.js'

type QuoteBody = Static<ReturnType<typeof quoteBodySchema>>

/** Wire body → the stored request record: optional objects resolved, defaults made explicit. */
export const toQuoteRequest = (body: QuoteBody, origin: QuoteRequestRecord['origin']): QuoteRequestRecord => ({
  organisationId: body.organisationId,
  locale: body.locale,
  consumer: body.consumer,
  merchant: body.merchant ?? null,
  transaction: body.transaction,
  orderItems: body.orderItems ?? null,
  matchConsumerLocation: body.projectFilters?.credits?.matchConsumerLocation ?? false,
  responseOptions: {
    includeImpactPartnerDetails: body.responseOptions?.includeImpactPartnerDetails ?? false,
    includeImpactPartnerRates: body.responseOptions?.includeImpactPartnerRates ?? false,
  },
  origin,
})

const EXAMPLE = { ...FLORIST_EXAMPLE, responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true } }

const quoteRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.addHook('onRequest', requireApiKey(ctx.access))
  const common = { tags: ['quotes'], security: bearerSecurity }
  const body = { ...quoteBodySchema(ctx.config), examples: [EXAMPLE] }
  const errors = errorResponses(400, 401, 403, 404, 413, 415, 422)

  app.post(
    '/quotes/carbon',
    {
      schema: {
        ...common,
        summary: 'Create a carbon quote',
        description:
          "Estimates the purchase's footprint and locks the carbon-credit price, service fee and sales tax. " +
          '`merchant` may be omitted only when the organisation has an MCC. Unsupported locales fall back to en-GB.',
        body,
        response: { 201: CarbonQuoteSchema, ...errors },
      },
    },
    async (request, reply) => {
      const quote = await createQuote(ctx, principalOf(request), toQuoteRequest(request.body, 'quote'), 'carbon')
      return reply.code(201).send(presentCarbonQuote(quote))
    },
  )

  app.post(
    '/quotes/nature',
    {
      schema: {
        ...common,
        summary: 'Create a nature quote',
        description:
          'Estimates the area of intact nature lost (MSA, m² and ft²; an estimate) and locks the contribution rates. No credits section.',
        body,
        response: { 201: NatureQuoteSchema, ...errors },
      },
    },
    async (request, reply) => {
      const quote = await createQuote(ctx, principalOf(request), toQuoteRequest(request.body, 'quote'), 'nature')
      return reply.code(201).send(presentNatureQuote(quote))
    },
  )

  app.get(
    '/quotes/:id',
    {
      schema: {
        ...common,
        summary: 'Get a quote, exactly as it was created',
        params: IdParamsSchema,
        response: { 200: Type.Union([CarbonQuoteSchema, NatureQuoteSchema]), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => presentQuote(await getQuote(ctx, principalOf(request), request.params.id)),
  )

  app.get(
    '/quotes/:id/projects',
    {
      schema: {
        ...common,
        summary: 'List the projects priced in a quote',
        description: 'The credit projects the quote priced, with the weights that split every credits allocation. Empty for nature quotes.',
        params: IdParamsSchema,
        response: { 200: Type.Array(QuoteProjectSchema), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const quote = await getQuote(ctx, principalOf(request), request.params.id)
      return presentQuoteProjects(quote.currencyCode, quoteProjects(quote))
    },
  )
}

export default quoteRoutes
