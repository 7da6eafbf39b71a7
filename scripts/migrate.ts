// npm run db:migrate [-- down]: applies pending migrations to DATABASE_URL (or the embedded database).
import { ConfigError, loadConfig, loadDotEnvFile } from '../src/config.js'
import { openConfiguredDatabase, openMigrationDatabase } from '../src/db/connect.js'
import { migrateDown, migrateToLatest } from '../src/db/migrate.js'

async function main(): Promise<void> {
  loadDotEnvFile()
  const config = loadConfig()
  const direction = process.argv[2] ?? 'latest'
  if (direction !== 'latest' && direction !== 'down') throw new Error(`unknown direction "${direction}" (latest | down)`)
  // On Postgres, a connection without the API's statement bounds: a migration may rewrite a large table.
  const handle = config.DATABASE_URL
    ? openMigrationDatabase({ ...config, DATABASE_URL: config.DATABASE_URL })
    : await openConfiguredDatabase(config)
  try {
    const applied = direction === 'down' ? await migrateDown(handle.db) : await migrateToLatest(handle.db)
    console.log(JSON.stringify({ backend: handle.backend, direction, migrations: applied }))
  } finally {
    await handle.close()
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error)
  process.exitCode = 1
})
