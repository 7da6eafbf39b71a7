// Runs the migrations of migrations/index.ts with the Kysely migrator (advisory lock + transaction on Postgres).
import { Migrator, type Kysely, type MigrationResult } from 'kysely'
import { migrations } from '../../migrations/index.js'

export class MigrationError extends Error {
  constructor(
    readonly results: readonly MigrationResult[],
    cause: unknown,
  ) {
    super(`migration failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'MigrationError'
  }
}

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider: { getMigrations: async () => migrations } })
}

/** Applies every pending migration; returns the names applied now. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results = [] } = await migrator(db).migrateToLatest()
  if (error) throw new MigrationError(results, error)
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Reverts the most recent migration; returns its name, if any. */
export async function migrateDown(db: Kysely<any>): Promise<string[]> {
  const { error, results = [] } = await migrator(db).migrateDown()
  if (error) throw new MigrationError(results, error)
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Names of migrations not yet applied to this database. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const all = await migrator(db).getMigrations()
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name)
}

export class PendingMigrationsError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `the database has ${pending.length} pending migration(s) (${pending.join(', ')}); ` +
        'run `npm run db:migrate` or set MIGRATE_ON_START=true',
    )
    this.name = 'PendingMigrationsError'
  }
}

/**
 * Brings the schema up to date where that is our job (the embedded database, or MIGRATE_ON_START),
 * and otherwise refuses to run against an out-of-date schema. `migrations` is where migrations run, when not on `db`
 * (on Postgres, a connection without the API's statement bounds: src/db/connect.ts, openMigrationDatabase).
 */
export async function prepareSchema(
  db: Kysely<any>,
  migrate: boolean,
  migrations?: () => Promise<{ db: Kysely<any>; close(): Promise<void> }>,
): Promise<string[]> {
  if (migrate && migrations) {
    const handle = await migrations()
    try {
      return await migrateToLatest(handle.db)
    } finally {
      await handle.close()
    }
  }
  if (migrate) return migrateToLatest(db)
  const pending = await pendingMigrations(db)
  if (pending.length > 0) throw new PendingMigrationsError(pending)
  return []
}
