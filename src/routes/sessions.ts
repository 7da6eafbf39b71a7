import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { principalOf, requireApiKey, requireSessionCredential, sessionCredentialOf } from '../http/auth.js'
import { PREFLIGHT_MAX_AGE_SECONDS, sessionReadCors, sessionReadPreflight } from '../http/cors.js'
import { presentCreatedSession, presentSdkSession } from '../http/presenters/sessions.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas/common.js'
import { FLORIST_EXAMPLE, QUOTE_CREATION_ERRORS, toQuoteRequest, type AmountLimits } from '../http/schemas/quotes.js'
import {
  checkoutSessionBodySchema,
  CreatedSessionSchema,
  postPurchaseSessionBodySchema,
  SdkSessionSchema,
  SessionQuerySchema,
  type SdkDisclosure,
} from '../http/schemas/sessions.js'
import type { SessionOrigins } from '../services/session-origins.js'
import { createSession, readSession, type SessionDeps, type SessionKind } from '../services/sessions.js'

const { locale: _locale, ...postPurchase } = FLORIST_EXAMPLE
const CREATE_EXAMPLE = { ...postPurchase, impactType: 'carbon', sdkVariant: 'embedded', projectFilters: { matchConsumerLocation: true } }
const { sdkVariant: _variant, ...CHECKOUT_EXAMPLE } = { ...CREATE_EXAMPLE, locale: 'en-US' }

interface SessionRouteOptions {
  deps: SessionDeps
  limits: AmountLimits
  /** The allowed origins of each session's organisation: CORS of the SDK reads (src/http/cors.ts). */
  origins: SessionOrigins
  /** What the US disclosure states (OPERATOR_LEGAL_NAME, DISCLOSURE_PAYOUT_DAYS). */
  disclosure: SdkDisclosure
}

const sessionRoutes: FastifyPluginAsyncTypebox<SessionRouteOptions> = async (app, { deps, limits, origins, disclosure }) => {
  const common = { tags: ['sessions'] }
  const createErrors = errorResponses(...QUOTE_CREATION_ERRORS)
  const onRequest = requireApiKey(deps.access)

  app.post(
    '/post-purchase/sessions',
    {
      onRequest,
      config: { permission: 'transactions:write' },
      schema: {
        ...common,
        security: bearerSecurity,
        summary: 'Create a post-purchase session',
        description:
          'Creates the session a frontend SDK renders after payment, backed by a new quote of `impactType` ' +
          '(an ordinary quote: readable with GET /quotes/:id and allocatable). `clientSecret` is shown once; pass it and ' +
          '`sessionId` to the SDK only. `locale` is a Canopy extension (the reference body has none; default en-GB). ' +
          '`projectFilters.matchConsumerLocation` sits directly under projectFilters here.',
        body: { ...postPurchaseSessionBodySchema(limits), examples: [CREATE_EXAMPLE] },
        response: { 200: CreatedSessionSchema, ...createErrors },
      },
    },
    async (request, reply) => {
      const { body } = request
      const created = await createSession(deps, principalOf(request), {
        kind: 'post-purchase',
        sdkVariant: body.sdkVariant,
        impactType: body.impactType ?? 'carbon',
        request: toQuoteRequest(body, {
          origin: 'post-purchase-session',
          matchConsumerLocation: body.projectFilters?.matchConsumerLocation,
        }),
      })
      return reply.code(200).header('cache-control', 'no-store').send(presentCreatedSession(created))
    },
  )

  app.post(
    '/checkout/sessions',
    {
      onRequest,
      config: { permission: 'transactions:write' },
      schema: {
        ...common,
        security: bearerSecurity,
        summary: 'Create a checkout session',
        description:
          'Pre-purchase: creates the session the checkout SDK renders, backed by a new quote whose `quoteId` ' +
          'the merchant later passes to POST /funds/allocations. Same request as a post-purchase session without `sdkVariant`.',
        body: { ...checkoutSessionBodySchema(limits), examples: [CHECKOUT_EXAMPLE] },
        response: { 200: CreatedSessionSchema, ...createErrors },
      },
    },
    async (request, reply) => {
      const { body } = request
      const created = await createSession(deps, principalOf(request), {
        kind: 'checkout',
        sdkVariant: null,
        impactType: body.impactType ?? 'carbon',
        request: toQuoteRequest(body, { origin: 'checkout-session', matchConsumerLocation: body.projectFilters?.matchConsumerLocation }),
      })
      return reply.code(200).header('cache-control', 'no-store').send(presentCreatedSession(created))
    },
  )

  for (const kind of ['post-purchase', 'checkout'] as const satisfies readonly SessionKind[]) {
    app.get(
      `/${kind}/sessions/:id`,
      {
        onRequest: requireSessionCredential(deps.access),
        onSend: sessionReadCors(origins),
        schema: {
          ...common,
          security: [{ clientSecret: [] }, ...bearerSecurity],
          summary: `Read a ${kind} session (frontend SDK)`,
          description:
            '`Authorization: Bearer <clientSecret>` of this session (never in the query string), or an API key ' +
            "of the owning organisation's tree. Returns what the SDK renders: footprint and equivalents (re-localised by " +
            '`?locale=`), credits amounts and unit, the projects with their country names in that locale, contribution rates, ' +
            'partners with images, and what the US disclosure states. After `expiresAt`: 410 SESSION_EXPIRED. ' +
            "CORS: every answer carries `Vary: Origin`, and `Access-Control-Allow-Origin` only for an origin the session's " +
            'organisation allows (never `*`, never credentials).',
          params: IdParamsSchema,
          querystring: SessionQuerySchema,
          response: {
            200: SdkSessionSchema,
            ...errorResponses('BAD_REQUEST', 'SECRET_IN_QUERY', 'UNAUTHORIZED', 'NOT_FOUND', 'SESSION_EXPIRED'),
          },
        },
      },
      async (request, reply) => {
        const found = await readSession(deps, sessionCredentialOf(request), request.params.id, kind)
        return reply.header('cache-control', 'no-store').send(presentSdkSession(found, request.query.locale, disclosure))
      },
    )

    app.options(
      `/${kind}/sessions/:id`,
      {
        schema: {
          ...common,
          summary: `CORS preflight of a ${kind} session read (browser SDK)`,
          description:
            "204 for every origin. When the `Origin` is one the session's organisation allows (its own allowedOrigins, else " +
            "its nearest ancestor's), with `Access-Control-Allow-Origin: <that origin>`, `Access-Control-Allow-Methods: GET`, " +
            `\`Access-Control-Allow-Headers: authorization\` and \`Access-Control-Max-Age: ${PREFLIGHT_MAX_AGE_SECONDS}\`; otherwise, and for an ` +
            'unknown session alike, with none of them. Always `Vary: Origin`. No other route answers CORS.',
          response: {
            204: { type: 'null', description: 'No content; the CORS headers say whether the origin may read' },
            ...errorResponses(),
          },
        },
      },
      sessionReadPreflight(origins),
    )
  }
}

export default sessionRoutes
