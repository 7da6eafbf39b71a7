// Entry point: config → database (+ schema) → demo bootstrap → app → listen, with graceful shutdown.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { allowDemoOrigins, bootstrapDemo, demoCredentialsPath, hasDemoCredentials } from './bootstrap/demo.js'
import { ConfigError, loadConfig, loadDotEnvFile } from './config.js'
import { DataDirLockedError, openConfiguredDatabase } from './db/connect.js'
import { PendingMigrationsError, prepareSchema } from './db/migrate.js'
import { AppError } from './errors.js'

async function main(): Promise<void> {
  loadDotEnvFile()
  const config = loadConfig()
  const database = await openConfiguredDatabase(config)
  const embedded = database.backend === 'pglite'
  let app
  try {
    await prepareSchema(database.db, embedded || config.MIGRATE_ON_START)
    const demo = embedded && config.DEMO_BOOTSTRAP ? await bootstrapDemo(database.db, config.DATA_DIR, new Date()) : undefined
    const demoOrigins =
      embedded && config.DEMO_BOOTSTRAP && config.DEMO_ALLOWED_ORIGINS
        ? await allowDemoOrigins(database.db, config.DATA_DIR, config.DEMO_ALLOWED_ORIGINS, new Date())
        : undefined
    app = await buildApp({ config, database })
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
  closeWithGrace({ delay: config.SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err) server.log.error({ err }, 'shutting down after an unexpected error')
    else server.log.info({ signal }, 'shutting down')
    await server.close()
  })
  await server.listen({ port: config.PORT, host: config.HOST })
  server.log.info({ backend: database.backend }, 'canopy is ready')
}

main().catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof PendingMigrationsError ||
    error instanceof DataDirLockedError ||
    error instanceof AppError
  console.error(known ? `canopy: ${(error as Error).message}` : error)
  process.exit(1)
})
