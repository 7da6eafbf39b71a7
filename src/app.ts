// buildApp: the Fastify application (plugins, error handling, routes) over a given database. Never listens.
import { randomUUID } from 'node:crypto'
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import ajvErrors from 'ajv-errors'
import ajvKeywords from 'ajv-keywords'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { DestinationStream } from 'pino'
import { systemClock, type Clock } from './clock.js'
import { publicBaseUrl, summaryRollupDelayMs, trustProxySetting, type Config } from './config.js'
import type { DatabaseHandle } from './db/connect.js'
import { pendingReceiptStats } from './db/repositories/tax-receipts.js'
import { pendingDeliveryStats } from './db/repositories/webhooks.js'
import { readBearerToken } from './http/auth.js'
import { errorCodeComponent } from './http/schemas/common.js'
import { webhookDocs } from './http/schemas/webhook-events.js'
import { clientErrorHandler, frameworkErrors, installErrorHandlers } from './http/errors.js'
import { installJsonBodyParser } from './http/json-body.js'
import { rateLimitSetup } from './http/rate-limit.js'
import { loggerOptions, requestLoggerFactory } from './logger.js'
import { noMetrics, UNMATCHED_ROUTE, type PrometheusMetrics } from './metrics.js'
import allocationRoutes from './routes/allocations.js'
import reconciliationRoutes from './routes/reconciliation.js'
import statementRoutes from './routes/statements.js'
import catalogueRoutes from './routes/impact-partners.js'
import apiKeyRoutes from './routes/api-keys.js'
import healthRoutes from './routes/health.js'
import organisationRoutes from './routes/organisations.js'
import publicFileRoutes from './routes/public-files.js'
import quoteRoutes from './routes/quotes.js'
import { sdkDisclosure } from './http/presenters/sessions.js'
import sessionRoutes from './routes/sessions.js'
import { AccessResolver } from './services/access.js'
import { AllocationStore } from './services/allocation-store.js'
import { fxAgeDays } from './services/fx.js'
import { PublicFiles, type PublicFileDirs } from './services/public-files.js'
import { QuoteStore } from './services/quote-store.js'
import { ReferenceDataCache } from './services/reference-data.js'
import { SessionOrigins } from './services/session-origins.js'
import { smtpSender, TaxReceiptSender } from './services/tax-receipts.js'
import { AddressPolicy } from './services/webhooks/address-policy.js'
import { webhookClient } from './services/webhooks/http-client.js'
import { WebhookWorker } from './services/webhooks/worker.js'
import webhookEndpointRoutes from './routes/webhook-endpoints.js'
import summaryRoutes from './routes/summary.js'
import { RollupWorker } from './services/summary-rollups.js'
import { PartitionMaintenanceWorker } from './services/partitions.js'
import { TableStatisticsWorker } from './services/table-statistics.js'
import { findRolledUntil } from './db/repositories/allocation-rollups.js'
import auditEventRoutes from './routes/audit-events.js'
import hubApiRoutes, { type ApiRoutePlugin, type HubRoute } from './routes/hub/api.js'
import hubPageRoutes from './routes/hub/pages.js'
import hubInsightRoutes from './routes/hub/insights.js'
import { HubAssets } from './services/hub-assets.js'
import { HubEmailSender } from './services/hub/emails.js'
import { databaseFailureStore, redisFailureStore, SignInThrottle, withFallback } from './services/hub/throttle.js'
import { parseRetrySchedule } from './domain/webhooks.js'

export interface BuildAppOptions {
  config: Config
  /** Owned by the app from now on: closed when the app closes. */
  database: DatabaseHandle
  clock?: Clock
  /** Where logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream
  /** Metrics to record into (server.ts serves them on METRICS_PORT); none = nothing is measured. */
  metrics?: PrometheusMetrics
  /** Where the SDK bundle and the demo images are read from; dist/sdk and assets/demo/images by default. */
  publicFiles?: PublicFileDirs
  /** Jitter of webhook retries (tests fix it); Math.random by default. */
  random?: () => number
  /** Where the Hub's built browser code is read from; dist/hub by default. */
  hubAssets?: HubAssets
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This process's webhook worker (running unless WEBHOOK_WORKER=false; tests may drive runOnce). */
    webhooks: WebhookWorker
    /** This process's summary rollup worker (running unless SUMMARY_ROLLUP_WORKER=false; tests may drive runOnce). */
    summaryRollups: RollupWorker
    /** This process's partition maintenance (running unless PARTITION_MAINTENANCE=false; tests may drive runOnce). */
    partitions: PartitionMaintenanceWorker
    /** This process's table statistics worker: on Postgres unless TABLE_STATISTICS_WORKER=false (src/services/table-statistics.ts). */
    tableStatistics: TableStatisticsWorker | undefined
  }
}

type AjvPlugins = NonNullable<NonNullable<FastifyServerOptions['ajv']>['plugins']>

const REQUEST_ID = /^[\w.:-]{1,128}$/

/** Every route is also served under /v3 (the real service's base URL): one registration, one rewrite. */
export const withoutVersionPrefix = (url: string): string =>
  url === '/v3' || url.startsWith('/v3/') || url.startsWith('/v3?') ? url.slice(3) || '/' : url

/** The spec writes these paths with /v3; OpenAPI lists every route once, in the spec's form. */
const DOCUMENTED_UNDER_V3 = [
  '/organisations',
  '/post-purchase/',
  '/checkout/',
  '/api-keys',
  '/webhook-endpoints',
  '/audit-events',
  '/statements',
  '/impact-partners',
]

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, database } = options
  // `reads`: the read replica's executor (DATABASE_REPLICA_URL), `db` itself without one (src/db/replica.ts).
  const { db, reads } = database
  const clock = options.clock ?? systemClock
  // The caches read it on every lookup: Date.now for the system clock, rather than a Date object per call.
  const now = clock === systemClock ? Date.now : () => clock().getTime()
  // The shared collaborators, built once; each route plugin gets the few its services use.
  // Set once the app (and its logger) exists.
  let logBackgroundError = (_error: unknown): void => {}
  const access = new AccessResolver(db, config.AUTH_CACHE_TTL_MS, now, (error) => logBackgroundError(error))
  const reference = new ReferenceDataCache(db, config.CATALOGUE_CACHE_TTL_MS, now)
  const quotes = new QuoteStore(db, config.QUOTE_CACHE_SIZE)
  const allocations = new AllocationStore(db)
  // Allowed origins change rarely; like API keys, a change reaches every process within AUTH_CACHE_TTL_MS.
  const sessionOrigins = new SessionOrigins(db, config.AUTH_CACHE_TTL_MS, now)
  const limits = { amountMax: config.AMOUNT_MAX }
  const prometheus = options.metrics
  const metrics = prometheus ?? noMetrics

  const trustProxy = trustProxySetting(config.TRUST_PROXY) ?? false
  const app = Fastify({
    logger: loggerOptions(config.LOG_LEVEL, options.logStream),
    childLoggerFactory: requestLoggerFactory,
    // The client address (request.ip) and scheme (request.protocol) through the proxies TRUST_PROXY names, only.
    // A number of proxies: the address that many hops from the socket (Fastify's own reading of a number).
    trustProxy: typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id']
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
    },
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: 72_000,
    // On close: idle keep-alive connections are closed at once; requests arriving later get a 503.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    rewriteUrl: (req) => withoutVersionPrefix(req.url ?? '/'),
    ajv: {
      customOptions: { allErrors: true, removeAdditional: false, coerceTypes: false, useDefaults: true },
      // errorMessage: worded messages for patterns; transform: UUIDs lower-cased as they are validated. Both are
      // CommonJS modules whose function is also their `default` export.
      // (Their option types are narrower than Fastify's Plugin<unknown>, hence the cast.)
      plugins: [ajvErrors.default, [ajvKeywords.default, ['transform']]] as AjvPlugins,
    },
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>()

  // JSON only: anything else is 415, including text/plain, which Fastify would otherwise parse as a string.
  logBackgroundError = (error) => app.log.warn({ err: error }, "could not record an api key's last use")
  app.removeContentTypeParser('text/plain')
  installJsonBodyParser(app)
  app.decorateRequest('bearerToken', undefined)
  app.decorateRequest('bearerTokenHash', undefined)
  app.decorateRequest('principal', undefined)
  app.decorateRequest('hubSessionId', undefined)
  app.decorateRequest('hub', undefined)
  // Callback hooks on every request: an async one costs a promise and a turn of the microtask queue.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
  app.addHook('onRequest', readBearerToken)
  if (prometheus) instrument(app, prometheus, { database, reference })
  watchReplica(app, database, prometheus, config.DATABASE_REPLICA_MAX_LAG_MS)
  // Tax receipts leave through the outbox only when an SMTP server is configured; otherwise they wait.
  const mailer = config.SMTP_URL ? smtpSender(config.SMTP_URL, config.SMTP_FROM) : undefined
  const receipts = mailer
    ? new TaxReceiptSender(db, mailer.send, { pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, now: clock, log: app.log })
    : undefined
  const hubEmails = mailer
    ? new HubEmailSender(db, mailer.send, {
        from: config.HUB_EMAIL_FROM,
        pollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS,
        now: clock,
        log: app.log,
      })
    : undefined
  // Failed Hub sign-ins are counted in Redis when there is one (every process shares the count), else in the database.
  const throttleRedis = config.REDIS_URL
    ? new (await import('ioredis')).Redis(config.REDIS_URL, {
        connectionName: 'canopy-sign-in',
        connectTimeout: 1_000,
        commandTimeout: 250,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined
  throttleRedis?.on('error', () => {})
  const failures = throttleRedis
    ? withFallback(redisFailureStore(throttleRedis), databaseFailureStore(db), (error) =>
        app.log.warn({ err: error }, 'sign-in throttle: Redis failed, counting in the database'),
      )
    : databaseFailureStore(db)
  const rateLimits = await rateLimitSetup({
    perMinute: config.RATE_LIMIT_PER_MINUTE,
    redisUrl: config.REDIS_URL,
    log: app.log,
    onStoreError: prometheus && (() => prometheus.rateLimitStoreFailed()),
  })
  // Webhooks: every process may deliver; a commit here wakes this process's worker at once.
  const addressPolicy = new AddressPolicy(config.WEBHOOK_ALLOWED_CIDRS)
  const webhookHttp = webhookClient({ policy: addressPolicy })
  const webhooks = new WebhookWorker({
    db,
    post: webhookHttp.post,
    clock,
    wallClock: systemClock,
    random: options.random ?? Math.random,
    schedule: parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE) ?? [],
    leaseMs: config.WEBHOOK_LEASE_SECONDS * 1000,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    log: app.log,
    metrics,
  })
  app.decorate('webhooks', webhooks)
  // Summary rollups: every process may roll up closed time; the state row's lock lets one work at a time.
  const summaryRollups = new RollupWorker({
    db,
    clock,
    delayMs: summaryRollupDelayMs(config),
    intervalMs: config.SUMMARY_ROLLUP_INTERVAL_MS,
    log: app.log,
    metrics,
  })
  app.decorate('summaryRollups', summaryRollups)
  const partitions = new PartitionMaintenanceWorker({
    db,
    clock,
    retention: {
      quoteDays: config.QUOTE_RETENTION_DAYS,
      webhookAttemptDays: config.WEBHOOK_ATTEMPT_RETENTION_DAYS,
      taxReceiptDays: config.TAX_RECEIPT_RETENTION_DAYS,
    },
    intervalMs: config.PARTITION_MAINTENANCE_INTERVAL_MS,
    log: app.log,
    metrics,
  })
  app.decorate('partitions', partitions)
  // Postgres only: the embedded database has one connection and no autovacuum to stand in for.
  const tableStatistics =
    config.TABLE_STATISTICS_WORKER && database.backend === 'postgres'
      ? new TableStatisticsWorker({ db, intervalMs: config.TABLE_STATISTICS_INTERVAL_MS, log: app.log })
      : undefined
  app.decorate('tableStatistics', tableStatistics)
  const wakeWebhooks = () => webhooks.wake()
  app.addHook('onReady', async () => {
    if (addressPolicy.opensRanges) {
      app.log.warn(
        { allowedCidrs: config.WEBHOOK_ALLOWED_CIDRS },
        'webhooks may reach these otherwise refused address ranges (WEBHOOK_ALLOWED_CIDRS)',
      )
    }
    // Not awaited: a replica that does not answer must not hold up start-up (reads go to the primary meanwhile).
    void database.replica?.start()
    if (config.WEBHOOK_WORKER) webhooks.start()
    if (config.SUMMARY_ROLLUP_WORKER) summaryRollups.start()
    if (config.PARTITION_MAINTENANCE) partitions.start()
    tableStatistics?.start()
    receipts?.start()
    hubEmails?.start()
    await rateLimits.ready()
    await warnIfRatesAreOld(app, reference, clock(), config.FX_MAX_AGE_DAYS)
  })
  app.addHook('onClose', async () => {
    await rateLimits.close()
    await receipts?.stop()
    await hubEmails?.stop()
    throttleRedis?.disconnect()
    // In-flight deliveries finish (each within the client's 15 s); nothing new is claimed. The workers stop together:
    // each waits a moment for a run in progress, and on a frozen link those moments would add up.
    await Promise.all([webhooks.stop(), summaryRollups.stop(), partitions.stop(), tableStatistics?.stop()])
    await webhookHttp.close()
    mailer?.close()
    await quotes.drain()
    await allocations.drain()
    await access.drain()
    await database.close()
  })

  // Shutdown with keep-alive clients: a connection busy when close() starts would be kept alive after
  // its answer and hold the process until keepAliveTimeout. Answers sent from then on say
  // `Connection: close` (Node then closes the connection), and connections that fall idle anyway
  // (an answer already on its way at that moment) are closed as they appear.
  let closing: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    closing = setInterval(() => app.server.closeIdleConnections(), 100).unref()
  })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing !== undefined) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('onClose', async () => clearInterval(closing))

  installErrorHandlers(app)

  rateLimits.install(app)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Canopy API',
        version: '1.0.0',
        description:
          'Carbon quotes, post-purchase and checkout sessions, and funds allocations. ' +
          'Every route is also served under the /v3 prefix (or without it); errors share one shape: ' +
          '`{ error, code, details?, requestId }`.',
      },
      // The events webhook endpoints receive, and every error code (clients type their errors from both). The
      // schemas are TypeBox objects, which the plugin's typings do not model: the OpenAPI validator test checks them.
      webhooks: webhookDocs() as Record<string, never>,
      components: {
        schemas: { ErrorCode: errorCodeComponent() },
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: ck_live_… or ck_test_…' },
          clientSecret: {
            type: 'http',
            scheme: 'bearer',
            description: "A session's client secret (cs_…), for that session's SDK read only",
          },
        },
      },
    },
    transform: ({ schema, url }) => ({
      // The Hub's copies of the API's routes (/hub/api/…) and its own are not the public API.
      schema: url.startsWith('/hub') ? { ...schema, hide: true } : schema,
      url: DOCUMENTED_UNDER_V3.some((path) => url.startsWith(path)) ? `/v3${url}` : url,
    }),
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () => app.swagger())

  const quoteDeps = { access, reference, quotes, clock, metrics }
  // The API's route plugins for API keys. Each is served here and again under /hub/api for Hub users, with the
  // same schemas, services and permissions (src/routes/hub/index.ts): add a new API route plugin to this list.
  const apiRoutes: ApiRoutePlugin[] = [
    apiRoute(organisationRoutes, { deps: { db, access, reference, clock, sessionOrigins } }),
    apiRoute(apiKeyRoutes, { deps: { db, access, clock } }),
    apiRoute(quoteRoutes, { deps: quoteDeps, limits }),
    apiRoute(allocationRoutes, {
      deps: { access, quotes, allocations, reference, clock, metrics, webhooks, quoteRetentionDays: config.QUOTE_RETENTION_DAYS },
      limits,
    }),
    apiRoute(webhookEndpointRoutes, {
      deps: { db, access, clock, urls: { policy: addressPolicy, allowHttp: config.WEBHOOK_ALLOW_HTTP }, wake: wakeWebhooks },
    }),
    // Read-only routes take `reads` (pages, exports): the replica when one is configured and caught up. A service that
    // only reads is routed there by passing `db: reads` here; one that also writes declares `reads` in its deps.
    apiRoute(reconciliationRoutes, { deps: { db, reads, access } }),
    apiRoute(summaryRoutes, { deps: { db: reads, access } }),
    apiRoute(statementRoutes, { deps: { db: reads, access, clock } }),
    apiRoute(catalogueRoutes, { deps: { db: reads, access } }),
    apiRoute(auditEventRoutes, { deps: { db, access } }),
  ]
  await app.register(healthRoutes, { database, readinessTimeoutMs: config.READINESS_TIMEOUT_MS })
  for (const register of apiRoutes) await register(app)
  await app.register(sessionRoutes, {
    deps: { ...quoteDeps, db, sessionTtlSeconds: config.SESSION_TTL_SECONDS },
    limits,
    origins: sessionOrigins,
    disclosure: sdkDisclosure(config.OPERATOR_LEGAL_NAME, config.DISCLOSURE_PAYOUT_DAYS),
  })
  // The Hub: its pages, and its API with the same route plugins behind a cookie session (src/routes/hub/api.ts).
  const baseUrl = publicBaseUrl(config)
  const hubRoutes: HubRoute[] = []
  app.decorate('hubRoutes', hubRoutes)
  await app.register(hubPageRoutes, { assets: options.hubAssets ?? new HubAssets() })
  await app.register(hubApiRoutes, {
    prefix: '/hub/api',
    signIn: {
      db,
      clock,
      throttle: new SignInThrottle(failures),
      idleTimeoutMs: config.HUB_SESSION_IDLE_MINUTES * 60_000,
      absoluteTimeoutMs: config.HUB_SESSION_ABSOLUTE_HOURS * 3_600_000,
    },
    users: { db, access, clock, publicBaseUrl: baseUrl, emailInvitations: mailer !== undefined },
    publicOrigin: new URL(baseUrl).origin,
    apiRoutes,
    hubRoutes: [apiRoute(hubInsightRoutes, { deps: { db, reads, access } })],
    routes: hubRoutes,
  })
  await app.register(publicFileRoutes, { files: new PublicFiles(options.publicFiles) })

  return app
}

// Each plugin's own options type is checked at the call.
const apiRoute =
  <O extends object>(plugin: FastifyPluginAsync<O>, options: O): ApiRoutePlugin =>
  async (scope) =>
    scope.register(plugin, options)

/**
 * Request durations by route pattern (never the raw URL: 404s are UNMATCHED_ROUTE), and the gauges read at
 * scrape time: the pool, the receipt outbox, the exchange rates in use.
 */
function instrument(
  app: FastifyInstance,
  metrics: PrometheusMetrics,
  sources: { database: DatabaseHandle; reference: ReferenceDataCache },
): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  const { database, reference } = sources
  const replica = database.replica
  metrics.setSources({
    ...(database.poolStats ? { pool: database.poolStats } : {}),
    ...(replica
      ? {
          replica: () => {
            const status = replica.status()
            return { inUse: status.state === 'in-use', lagMs: status.lagMs }
          },
        }
      : {}),
    outboxes: async () => ({
      tax_receipts: await pendingReceiptStats(database.db),
      webhook_deliveries: await pendingDeliveryStats(database.db),
    }),
    fxRates: async () => {
      const { table, origin } = await reference.fxInUse()
      return { date: table.date, origin }
    },
    summaryRollups: async () => ({ rolledUntil: await findRolledUntil(database.db) }),
  })
}

/**
 * The read replica taken out of use is a warning and a count (canopy_db_replica_skips_total); its return an info line.
 * A failover of the primary usually takes the replica out too (it stops receiving): routine, never an error.
 */
function watchReplica(app: FastifyInstance, database: DatabaseHandle, metrics: PrometheusMetrics | undefined, maxLagMs: number): void {
  database.replica?.onChange((change) => {
    if (change.state === 'in-use') {
      app.log.info(
        { replica: { lagMs: change.lagMs } },
        change.previous === 'unknown' ? 'read replica in use' : 'read replica in use again',
      )
      return
    }
    if (change.state !== 'skipped' || change.reason === null) return
    metrics?.replicaSkipped(change.reason)
    app.log.warn(
      { replica: { reason: change.reason, lagMs: change.lagMs, maxLagMs }, ...(change.error === undefined ? {} : { err: change.error }) },
      `read replica skipped (${change.reason}): reads go to the primary until a check finds it well`,
    )
  })
}

/** A start-up warning when new quotes would use exchange rates older than FX_MAX_AGE_DAYS. */
async function warnIfRatesAreOld(app: FastifyInstance, reference: ReferenceDataCache, now: Date, maxAgeDays: number): Promise<void> {
  try {
    const { table, origin } = await reference.fxInUse()
    const ageDays = fxAgeDays(table, now)
    if (ageDays > maxAgeDays) {
      app.log.warn(
        { fxDate: table.date, fxOrigin: origin, ageDays, maxAgeDays },
        `exchange rates in use are ${ageDays} days old (${table.date}, ${origin}); import the ECB's latest: npm run cli -- fx import eurofxref.csv`,
      )
    }
  } catch (error) {
    app.log.warn({ err: error }, 'could not read the exchange rates in use')
  }
}
