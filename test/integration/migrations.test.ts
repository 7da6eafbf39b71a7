import { sql, type Kysely } from 'kysely'
import { describe, expect, it } from 'vitest'
import { migrations } from '../../migrations/index.js'
import type { Database } from '../../src/db/database.js'
import { openPglite, openPostgres, type DatabaseHandle } from '../../src/db/connect.js'
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
