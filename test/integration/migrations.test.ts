import { sql, type Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrations } from '../../migrations/index.js'
import type { Database } from '../../src/db/database.js'
import { openMigrationDatabase, openPglite, openPostgres, type DatabaseHandle } from '../../src/db/connect.js'
import { migrateDown, migrateToLatest, pendingMigrations, prepareSchema, PendingMigrationsError } from '../../src/db/migrate.js'
import { createEmptyPostgresDatabase, onPostgres } from '../helpers/db.js'

const names = Object.keys(migrations)

async function tables(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT LIKE 'kysely_%'
    ORDER BY table_name`.execute(db)
  return rows.map((r) => r.table_name)
}

async function exercise(handle: DatabaseHandle): Promise<void> {
  expect(await pendingMigrations(handle.db)).toEqual(names)
  await expect(prepareSchema(handle.db, false)).rejects.toBeInstanceOf(PendingMigrationsError)
  expect(await migrateToLatest(handle.db)).toEqual(names)
  expect(await tables(handle.db)).toEqual(expect.arrayContaining(['organisations', 'api_keys']))
  expect(await migrateToLatest(handle.db)).toEqual([])
  expect(await prepareSchema(handle.db, false)).toEqual([])
  for (let i = names.length - 1; i >= 0; i--) expect(await migrateDown(handle.db)).toEqual([names[i]])
  expect(await tables(handle.db)).toEqual([])
  expect(await migrateToLatest(handle.db)).toEqual(names)
}

describe('migrations on an empty database', () => {
  it('migrate up, down and up again on the embedded database (PGlite)', async () => {
    const handle = await openPglite()
    try {
      await exercise(handle)
    } finally {
      await handle.close()
    }
  })

  it.runIf(onPostgres())('migrate up, down and up again on Postgres', async () => {
    const database = await createEmptyPostgresDatabase()
    const handle = openPostgres({ url: database.url, poolMax: 2 })
    try {
      await exercise(handle)
    } finally {
      await handle.close()
      await database.drop()
    }
  })

  it('names are timestamp-ordered and unique', () => {
    expect([...names].sort()).toEqual(names)
    for (const name of names) expect(name).toMatch(/^\d{4}_\d{2}_\d{2}_\d{6}_[a-z0-9_]+$/)
  })
})

describe.runIf(onPostgres())('where migrations run on Postgres', () => {
  // The API's bounds at their smallest: a statement of a migration that converts a large table runs far longer.
  const bounds = { DATABASE_CONNECT_TIMEOUT_MS: 2000, DATABASE_STATEMENT_TIMEOUT_MS: 100 }

  it('a connection without the statement bounds (lock waits bounded by the statement timeout), over a database default', async () => {
    const database = await createEmptyPostgresDatabase()
    const dbName = new URL(database.url).pathname.slice(1)
    const api = openPostgres({ url: database.url, poolMax: 1, statementTimeoutMs: 100, queryTimeoutMs: 200, lockTimeoutMs: 50 })
    const migration = openMigrationDatabase({ ...bounds, DATABASE_URL: database.url })
    try {
      await sql`ALTER DATABASE ${sql.id(dbName)} SET statement_timeout = '150ms'`.execute(api.db)
      const show = async (db: Kysely<Database>, name: string) =>
        (await sql<Record<string, string>>`SELECT current_setting(${name}) AS value`.execute(db)).rows[0]?.value
      expect(await show(migration.db, 'statement_timeout')).toBe('0')
      expect(await show(migration.db, 'lock_timeout')).toBe('100ms')
      expect(await show(migration.db, 'application_name')).toBe('canopy-migrate')
      // Past both of the API's bounds (the server's at 100 ms, the client's at 200 ms): answered.
      await expect(sql`SELECT pg_sleep(0.4)`.execute(migration.db)).resolves.toBeDefined()
      await expect(sql`SELECT pg_sleep(0.4)`.execute(api.db)).rejects.toMatchObject({ code: '57014' })
    } finally {
      await migration.close()
      await api.close()
      await database.drop()
    }
  })

  it('prepareSchema migrates on the connection it is given, and closes it', async () => {
    const database = await createEmptyPostgresDatabase()
    const api = openPostgres({ url: database.url, poolMax: 1 })
    let opened: DatabaseHandle | undefined
    let closed = false
    try {
      const applied = await prepareSchema(api.db, true, async () => {
        opened = openMigrationDatabase({ ...bounds, DATABASE_URL: database.url })
        const handle = opened
        return { db: handle.db, close: () => handle.close().then(() => void (closed = true)) }
      })
      expect(applied).toEqual(names)
      expect(opened).toBeDefined()
      expect(closed).toBe(true)
      // Applied where the API reads too, recorded once.
      expect(await pendingMigrations(api.db)).toEqual([])
      expect(await prepareSchema(api.db, false)).toEqual([])
    } finally {
      await api.close()
      await database.drop()
    }
  })
})
