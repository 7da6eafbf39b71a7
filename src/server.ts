// Entry point: config → database (+ schema) → demo bootstrap → app → listen (and the metrics listener), with
// graceful shutdown.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { bootstrapDemo, demoCredentialsPath, hasDemoCredentials } from './bootstrap/demo.js'
import { ConfigError, loadConfig, loadDotEnvFile } from './config.js'
import { DataDirLockedError, openConfiguredDatabase } from './db/connect.js'
import { PendingMigrationsError, prepareSchema } from './db/migrate.js'
import { listenForScrapes, MetricsListenError, PrometheusMetrics, type ScrapeListener } from './metrics.js'

async function main(): Promise<void> {
  loadDotEnvFile()
  const config = loadConfig()
  const database = await openConfiguredDatabase(config)
  const embedded = database.backend === 'pglite'
  // Metrics are served on their own port (METRICS_PORT, 0 = off), never on the API's.
  const metrics = config.METRICS_PORT > 0 ? new PrometheusMetrics() : undefined
  let scrapes: ScrapeListener | undefined
  let app
  try {
    await prepareSchema(database.db, embedded || config.MIGRATE_ON_START)
    const demo = embedded && config.DEMO_BOOTSTRAP ? await bootstrapDemo(database.db, config.DATA_DIR, new Date()) : undefined
    app = await buildApp({ config, database, metrics })
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
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
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
  await server.listen({ port: config.PORT, host: config.HOST })
  server.log.info({ backend: database.backend }, 'canopy is ready')
}

main().catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof PendingMigrationsError ||
    error instanceof DataDirLockedError ||
    error instanceof MetricsListenError
  console.error(known ? `canopy: ${(error as Error).message}` : error)
  process.exit(1)
})
