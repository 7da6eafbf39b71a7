// Entry point: config → database (+ schema) → demo bootstrap → app → listen (and the metrics listener), with
// graceful shutdown.
import { writeSync } from 'node:fs'
import { hostname } from 'node:os'
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { allowDemoOrigins, bootstrapDemo, demoCredentialsPath, hasDemoCredentials, seedDemoActivity } from './bootstrap/demo.js'
import { ConfigError, loadConfig, loadDotEnvFile, publicBaseUrl } from './config.js'
import {
  DatabaseUnreachableError,
  DataDirLockedError,
  errorCode,
  openConfiguredDatabase,
  openMigrationDatabase,
  waitForDatabase,
  type DatabaseHandle,
} from './db/connect.js'
import { PendingMigrationsError, prepareSchema } from './db/migrate.js'
import { AppError } from './errors.js'
import { listenForScrapes, MetricsListenError, PrometheusMetrics, type ScrapeListener } from './metrics.js'

const LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const
type Level = keyof typeof LEVELS

/**
 * Start-up lines before (or without) the app's logger: one JSON object per line in pino's format
 * (level, time, pid, hostname, msg), written synchronously so that nothing is lost on exit.
 */
function startupLog(levelName: string) {
  const threshold = levelName === 'silent' ? Infinity : (LEVELS[levelName as Level] ?? LEVELS.info)
  return (level: Level, msg: string, fields: Record<string, unknown> = {}) => {
    if (LEVELS[level] < threshold) return
    const line = { level: LEVELS[level], time: Date.now(), pid: process.pid, hostname: hostname(), ...fields, msg }
    writeSync(1, `${JSON.stringify(line)}\n`)
  }
}

/** An error as a log field: what went wrong, without a stack (the stack only for the unexpected). */
function describeError(error: unknown, withStack = false): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error) }
  const inner = (error as { errors?: unknown }).errors
  const message = error.message || (Array.isArray(inner) ? inner.map((e) => (e instanceof Error ? e.message : String(e))).join('; ') : '')
  return {
    type: error.name,
    ...(errorCode(error) === undefined ? {} : { code: errorCode(error) }),
    message,
    ...(withStack && error.stack ? { stack: error.stack } : {}),
  }
}

/** Where DATABASE_URL points, without its credentials. */
function databaseTarget(url: string): Record<string, unknown> {
  try {
    const parsed = new URL(url)
    return { host: parsed.hostname, port: Number(parsed.port || 5432), database: decodeURIComponent(parsed.pathname.slice(1)) }
  } catch {
    return {}
  }
}

let log = startupLog('info')
/** The database start-up waits for, for its log lines. */
let databaseField: Record<string, unknown> = {}

/** The database answered, but with a failure that waiting does not fix (credentials, database name…). */
class DatabaseRefusedError extends Error {
  constructor(readonly reason: unknown) {
    super(`the database cannot be used: ${reason instanceof Error ? reason.message : String(reason)}`, { cause: reason })
    this.name = 'DatabaseRefusedError'
  }
}

async function connect(config: ReturnType<typeof loadConfig>): Promise<DatabaseHandle> {
  const database = await openConfiguredDatabase(config)
  if (database.backend !== 'postgres' || !config.DATABASE_URL) return database
  databaseField = { database: databaseTarget(config.DATABASE_URL) }
  let reported: string | undefined
  try {
    await waitForDatabase(database, {
      budgetMs: config.DATABASE_STARTUP_TIMEOUT_MS,
      onRetry: ({ attempt, error, delayMs, remainingMs }) => {
        // One line per distinct problem, not one per attempt.
        const err = describeError(error)
        const key = `${String(err.code)}|${String(err.message)}`
        if (key === reported) return
        reported = key
        log('warn', 'database is unreachable; retrying', { ...databaseField, err, attempt, retryInMs: delayMs, giveUpInMs: remainingMs })
      },
    })
  } catch (error) {
    await database.close()
    throw error instanceof DatabaseUnreachableError ? error : new DatabaseRefusedError(error)
  }
  if (reported !== undefined) log('info', 'database is reachable', databaseField)
  return database
}

async function main(): Promise<void> {
  loadDotEnvFile()
  const config = loadConfig()
  log = startupLog(config.LOG_LEVEL)
  const database = await connect(config)
  const embedded = database.backend === 'pglite'
  // Metrics are served on their own port (METRICS_PORT, 0 = off), never on the API's.
  const metrics = config.METRICS_PORT > 0 ? new PrometheusMetrics() : undefined
  let scrapes: ScrapeListener | undefined
  let app
  let demo: Awaited<ReturnType<typeof bootstrapDemo>>
  try {
    const databaseUrl = config.DATABASE_URL
    await prepareSchema(
      database.db,
      embedded || config.MIGRATE_ON_START,
      databaseUrl && !embedded ? async () => openMigrationDatabase({ ...config, DATABASE_URL: databaseUrl }) : undefined,
    )
    demo =
      embedded && config.DEMO_BOOTSTRAP ? await bootstrapDemo(database.db, config.DATA_DIR, new Date(), publicBaseUrl(config)) : undefined
    const demoOrigins =
      embedded && config.DEMO_BOOTSTRAP && config.DEMO_ALLOWED_ORIGINS
        ? await allowDemoOrigins(database.db, config.DATA_DIR, config.DEMO_ALLOWED_ORIGINS, new Date())
        : undefined
    // Before the app (and its rollup worker) starts: the demo's records are in the past.
    const demoActivity =
      embedded && config.DEMO_BOOTSTRAP && config.DEMO_ACTIVITY ? await seedDemoActivity(database.db, config.DATA_DIR) : undefined
    app = await buildApp({ config, database, metrics })
    if (demoActivity) app.log.info(demoActivity, 'demo activity: allocations and reversals seeded (written: those new in this start)')
    if (demoOrigins) app.log.info({ allowedOrigins: demoOrigins }, 'demo organisation: allowed origins')
    if (demo) {
      console.log(
        [
          '',
          'Canopy demo credentials (shown once; also saved to ' + demoCredentialsPath(config.DATA_DIR) + '):',
          `  organisationId: ${demo.organisationId}`,
          `  apiKey:         ${demo.apiKey}`,
          '',
        ].join('\n'),
      )
    } else if (embedded && hasDemoCredentials(config.DATA_DIR)) {
      app.log.info(`demo credentials are in ${demoCredentialsPath(config.DATA_DIR)}`)
    }
  } catch (error) {
    await database.close()
    throw error
  }
  const server = app
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS, logger: server.log }, async ({ signal, err }) => {
    if (err) server.log.error({ err }, 'shutting down after an unexpected error')
    else server.log.info({ signal }, 'shutting down')
    await server.close()
    await scrapes?.close()
  })
  if (metrics) {
    try {
      await server.ready()
      scrapes = await listenForScrapes(metrics, {
        host: config.METRICS_HOST,
        port: config.METRICS_PORT,
        onError: (err) => server.log.error({ err }, 'metrics collection failed'),
      })
    } catch (error) {
      await server.close()
      throw error
    }
    server.log.info(`metrics listening at ${scrapes.url}`)
  }
  const address = await server.listen({ port: config.PORT, host: config.HOST })
  if (demo?.hubAdmin) {
    // After listen, so that the link names the real port (PORT=0 picks one); PUBLIC_BASE_URL wins when set.
    const base = config.PUBLIC_BASE_URL ? publicBaseUrl(config) : address.replace('localhost', '127.0.0.1')
    const link = demo.hubAdmin.setPasswordUrl.replace(/^https?:\/\/[^/]+/, base)
    console.log(
      [
        `The Hub: ${base}/hub — set the password of its demo admin (${demo.hubAdmin.email}) with this one-time link`,
        `(valid 24 h, shown once), then sign in: ${link}`,
        '',
      ].join('\n'),
    )
  }
  server.log.info({ backend: database.backend }, 'canopy is ready')
}

main().catch((error: unknown) => {
  if (error instanceof DatabaseUnreachableError) {
    log('fatal', `canopy: ${error.message}; exiting`, { ...databaseField, err: describeError(error.lastError) })
  } else if (error instanceof DatabaseRefusedError) {
    log('fatal', `canopy: ${error.message}`, { ...databaseField, err: describeError(error.reason) })
  } else if (error instanceof ConfigError) {
    // Printed whatever LOG_LEVEL says: the level itself may be what is wrong.
    startupLog('info')('fatal', `canopy: ${error.message}`, { problems: error.problems })
  } else if (
    error instanceof PendingMigrationsError ||
    error instanceof DataDirLockedError ||
    error instanceof MetricsListenError ||
    error instanceof AppError
  ) {
    log('fatal', `canopy: ${error.message}`)
  } else {
    log('fatal', 'canopy: start-up failed', { err: describeError(error, true) })
  }
  process.exit(1)
})
