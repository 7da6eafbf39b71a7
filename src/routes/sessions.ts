import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { QuoteRequestRecord } from '../db/database.js'
import { DEFAULT_LOCALE } from '../domain/equivalents.js'
import { AppError } from '../errors.js'
import { principalOf, requireApiKey } from '../http/auth.js'
import { presentSdkQuote } from '../http/presenters/quotes.js'
import { FLORIST_EXAMPLE } from '../http/quote-schemas.js'
import { bearerSecurity, errorResponses, IdParamsSchema } from '../http/schemas.js'
import {
  checkoutSessionBodySchema,
  CreatedSessionSchema,
  postPurchaseSessionBodySchema,
  SdkSessionSchema,
  SessionQuerySchema,
} from '../http/session-schemas.js'
import type { AccessResolver } from '../services/access.js'
import { API_KEY_PATTERN } from '../services/api-keys.js'
import {
  CLIENT_SECRET_PATTERN,
  createSession,
  readSession,
  sessionUnauthorized,
  type CreatedSession,
  type Session,
  type SessionCredential,
  type SessionKind,
} from '../services/sessions.js'
import type { RouteOptions } from './plugin-options.js'

type SessionBody = Static<ReturnType<typeof checkoutSessionBodySchema>>

/** Wire body → the session quote's stored request: defaults explicit, no responseOptions (sessions have none). */
const toQuoteRequest = (body: SessionBody, origin: QuoteRequestRecord['origin']): QuoteRequestRecord => ({
  organisationId: body.organisationId,
  locale: body.locale ?? DEFAULT_LOCALE,
  consumer: body.consumer,
  merchant: body.merchant ?? null,
  transaction: body.transaction,
  orderItems: body.orderItems ?? null,
  matchConsumerLocation: body.projectFilters?.matchConsumerLocation ?? false,
  responseOptions: { includeImpactPartnerDetails: false, includeImpactPartnerRates: false },
  origin,
})

const presentCreated = (session: CreatedSession): Static<typeof CreatedSessionSchema> => ({
  sessionId: session.sessionId,
  clientSecret: session.clientSecret,
  quoteId: session.quoteId,
  expiresAt: session.expiresAt.toISOString(),
})

const presentSession = (session: Session, locale: string | undefined): Static<typeof SdkSessionSchema> => ({
  sessionId: session.id,
  kind: session.kind,
  sdkVariant: session.sdkVariant,
  impactType: session.impactType,
  expiresAt: session.expiresAt.toISOString(),
  quoteId: session.quote.id,
  ...presentSdkQuote(session.quote, locale),
})

const looksLikeSecret = (name: string, value: unknown): boolean =>
  /secret/i.test(name) || (typeof value === 'string' && value.startsWith('cs_'))

/**
 * Session reads accept the session's client secret or a merchant API key. A secret in the query string
 * is refused outright (URLs end up in proxy logs and browser history), before anything else.
 */
const authenticateSessionRead =
  (access: AccessResolver) =>
  async (request: FastifyRequest): Promise<void> => {
    const query = request.query as Record<string, unknown>
    if (Object.entries(query).some(([name, value]) => looksLikeSecret(name, value))) {
      throw new AppError('BAD_REQUEST', 'a client secret is accepted only in the authorization header, never in the query string', [
        { path: '/querystring', message: 'must not contain a client secret' },
      ])
    }
    const token = request.bearerToken
    if (token && CLIENT_SECRET_PATTERN.test(token)) return
    if (!token || !request.bearerTokenHash || !API_KEY_PATTERN.test(token)) throw sessionUnauthorized()
    const principal = await access.authenticate(request.bearerTokenHash)
    if (!principal) throw sessionUnauthorized()
    request.principal = principal
  }

const credentialOf = (request: FastifyRequest): SessionCredential =>
  request.principal ? { kind: 'api-key', principal: request.principal } : { kind: 'client-secret', secret: request.bearerToken ?? '' }

const { locale: _locale, ...postPurchase } = FLORIST_EXAMPLE
const CREATE_EXAMPLE = { ...postPurchase, impactType: 'carbon', sdkVariant: 'embedded', projectFilters: { matchConsumerLocation: true } }
const { sdkVariant: _variant, ...CHECKOUT_EXAMPLE } = { ...CREATE_EXAMPLE, locale: 'en-US' }

const sessionRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const common = { tags: ['sessions'] }
  const createErrors = errorResponses(400, 401, 403, 404, 413, 415, 422)
  const onRequest = requireApiKey(ctx.access)

  app.post(
    '/post-purchase/sessions',
    {
      onRequest,
      schema: {
        ...common,
        security: bearerSecurity,
        summary: 'Create a post-purchase session',
        description:
          'Creates the session a frontend SDK renders after payment, backed by a new quote of `impactType` ' +
          '(an ordinary quote: readable with GET /quotes/:id and allocatable). `clientSecret` is shown once; pass it and ' +
          '`sessionId` to the SDK only. `locale` is a Canopy extension (the reference body has none; default en-GB). ' +
          '`projectFilters.matchConsumerLocation` sits directly under projectFilters here.',
        body: { ...postPurchaseSessionBodySchema(ctx.config), examples: [CREATE_EXAMPLE] },
        response: { 200: CreatedSessionSchema, ...createErrors },
      },
    },
    async (request, reply) => {
      const { sdkVariant, impactType = 'carbon' } = request.body
      const session = await createSession(ctx, principalOf(request), {
        kind: 'post-purchase',
        sdkVariant,
        impactType,
        request: toQuoteRequest(request.body, 'post-purchase-session'),
      })
      return reply.code(200).header('cache-control', 'no-store').send(presentCreated(session))
    },
  )

  app.post(
    '/checkout/sessions',
    {
      onRequest,
      schema: {
        ...common,
        security: bearerSecurity,
        summary: 'Create a checkout session',
        description:
          'Pre-purchase: creates the session the checkout SDK renders, backed by a new quote whose `quoteId` ' +
          'the merchant later passes to POST /funds/allocations. Same request as a post-purchase session without `sdkVariant`.',
        body: { ...checkoutSessionBodySchema(ctx.config), examples: [CHECKOUT_EXAMPLE] },
        response: { 200: CreatedSessionSchema, ...createErrors },
      },
    },
    async (request, reply) => {
      const session = await createSession(ctx, principalOf(request), {
        kind: 'checkout',
        sdkVariant: null,
        impactType: request.body.impactType ?? 'carbon',
        request: toQuoteRequest(request.body, 'checkout-session'),
      })
      return reply.code(200).header('cache-control', 'no-store').send(presentCreated(session))
    },
  )

  for (const kind of ['post-purchase', 'checkout'] as const satisfies readonly SessionKind[]) {
    app.get(
      `/${kind}/sessions/:id`,
      {
        onRequest: authenticateSessionRead(ctx.access),
        schema: {
          ...common,
          security: [{ clientSecret: [] }, ...bearerSecurity],
          summary: `Read a ${kind} session (frontend SDK)`,
          description:
            '`Authorization: Bearer <clientSecret>` of this session (never in the query string), or an API key ' +
            "of the owning organisation's tree. Returns what the SDK renders: footprint and equivalents (re-localised by " +
            '`?locale=`), credits amounts and unit, contribution rates, partners with images. After `expiresAt`: 410 SESSION_EXPIRED.',
          params: IdParamsSchema,
          querystring: SessionQuerySchema,
          response: { 200: SdkSessionSchema, ...errorResponses(400, 401, 404, 410) },
        },
      },
      async (request, reply) => {
        const session = await readSession(ctx, request.params.id, kind, credentialOf(request))
        return reply.header('cache-control', 'no-store').send(presentSession(session, request.query.locale))
      },
    )
  }
}

export default sessionRoutes
