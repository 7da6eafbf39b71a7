import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentCarbonQuote, presentNatureQuote, presentQuote, presentQuoteProjects } from '../http/presenters/quotes.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import {
  CarbonQuoteSchema,
  FLORIST_EXAMPLE,
  NatureQuoteSchema,
  QuoteProjectSchema,
  QUOTE_CREATION_ERRORS,
  quoteBodySchema,
  toQuoteRequest,
  type AmountLimits,
  type QuoteBody,
} from '../http/schemas/quotes.js'
import { createQuote, getQuote, getQuoteExplanation, quoteProjects, type QuoteDeps } from '../services/quotes.js'
import { explanationText } from '../http/presenters/explain.js'
import { QuoteExplanationSchema } from '../http/schemas/explain.js'

const EXAMPLE = { ...FLORIST_EXAMPLE, responseOptions: { includeImpactPartnerDetails: true, includeImpactPartnerRates: true } }

const quoteRequestOf = (body: QuoteBody) =>
  toQuoteRequest(body, {
    origin: 'quote',
    matchConsumerLocation: body.projectFilters?.credits?.matchConsumerLocation,
    responseOptions: body.responseOptions,
  })

const quoteRoutes: FastifyPluginAsyncTypebox<{ deps: QuoteDeps; limits: AmountLimits }> = async (app, { deps, limits }) => {
  app.addHook('onRequest', requireApiKey(deps.access))
  const common = { tags: ['quotes'], security: bearerSecurity }
  const body = { ...quoteBodySchema(limits), examples: [EXAMPLE] }
  const errors = errorResponses(...QUOTE_CREATION_ERRORS)

  app.post(
    '/quotes/carbon',
    {
      config: { permission: 'transactions:write' },
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
      const quote = await createQuote(deps, principalOf(request), quoteRequestOf(request.body), 'carbon')
      return reply.code(201).send(presentCarbonQuote(quote))
    },
  )

  app.post(
    '/quotes/nature',
    {
      config: { permission: 'transactions:write' },
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
      const quote = await createQuote(deps, principalOf(request), quoteRequestOf(request.body), 'nature')
      return reply.code(201).send(presentNatureQuote(quote))
    },
  )

  app.get(
    '/quotes/:id',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Get a quote, exactly as it was created',
        params: IdParamsSchema,
        response: {
          200: Type.Union([CarbonQuoteSchema, NatureQuoteSchema]),
          ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND'),
        },
      },
    },
    async (request) => presentQuote(await getQuote(deps, principalOf(request), request.params.id)),
  )

  app.get(
    '/quotes/:id/projects',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'List the projects priced in a quote',
        description: 'The credit projects the quote priced, with the weights that split every credits allocation. Empty for nature quotes.',
        params: IdParamsSchema,
        response: { 200: Type.Array(QuoteProjectSchema), ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND') },
      },
    },
    async (request) => {
      const quote = await getQuote(deps, principalOf(request), request.params.id)
      return presentQuoteProjects(quote.currencyCode, quoteProjects(quote))
    },
  )

  app.get(
    '/quotes/:id/explain',
    {
      config: { permission: 'impact:read' },
      schema: {
        ...common,
        summary: 'Where every figure of a quote came from',
        description:
          "Read only from what the quote locked (never from today's tables): the emission factor (MCC, country, source, " +
          "version, unit), the FX rates and deflator with their dates and sources, each project's price, rate and weight, the " +
          'tax rule of each line (jurisdiction, rate, source), the service fee, and every rounding step, with the arithmetic ' +
          'between them, so the amounts can be recomputed from it alone. Figures are exact decimal strings. Quotes priced ' +
          'before a part was locked list it in `missing`. JSON, or readable text with `Accept: text/plain`.',
        params: IdParamsSchema,
        produces: ['application/json', 'text/plain'],
        response: {
          200: {
            description: 'The explanation',
            content: { 'application/json': { schema: QuoteExplanationSchema }, 'text/plain': { schema: { type: 'string' } } },
          },
          ...errorResponses('BAD_REQUEST', 'UNAUTHORIZED', 'NOT_FOUND'),
        },
      },
    },
    async (request, reply) => {
      const explanation = await getQuoteExplanation(deps, principalOf(request), request.params.id)
      const accept = request.headers.accept ?? ''
      if (/\btext\/plain\b/i.test(accept) && !/application\/json/i.test(accept)) {
        return reply.type('text/plain; charset=utf-8').send(explanationText(explanation))
      }
      return reply.type('application/json; charset=utf-8').send(explanation)
    },
  )
}

export default quoteRoutes
