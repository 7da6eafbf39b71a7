// A fresh, migrated database per test file: a clone of the Postgres template, or PGlite loaded from the dump.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { inject } from 'vitest'
import { openPglite, openPostgres, type DatabaseHandle } from '../../src/db/connect.js'
import { databaseUrlFor } from '../global-setup.js'

export const databaseMode = (): 'postgres' | 'pglite' => inject('databaseMode')
export const onPostgres = (): boolean => databaseMode() === 'postgres'

export interface TestDatabase {
  /** Opens a new handle on this database (Postgres: a new pool; PGlite: the single instance, once). */
  open(poolMax?: number): Promise<DatabaseHandle>
  /** Postgres only: the connection string of this database. */
  url: string | undefined
  drop(): Promise<void>
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminUrl') })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Creates an empty, unmigrated Postgres database (for migration tests). */
export async function createEmptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `canopy_e_${inject('runId')}_${randomBytes(4).toString('hex')}`
  await admin((c) => c.query(`CREATE DATABASE ${name}`))
  return {
    url: databaseUrlFor(inject('adminUrl'), name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (databaseMode() === 'postgres') {
    const name = `canopy_t_${inject('runId')}_${randomBytes(4).toString('hex')}`
    const template = inject('templateDatabase')
    // Concurrent clones of one template can collide on its lock; retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
        break
      } catch (error) {
        if (attempt >= 20 || !/being accessed by other users/.test((error as Error).message)) throw error
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200))
      }
    }
    const url = databaseUrlFor(inject('adminUrl'), name)
    return {
      url,
      open: async (poolMax = 10) => openPostgres({ url, poolMax }),
      drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    }
  }
  const dump = new Blob([readFileSync(inject('pgliteDumpPath'))])
  let opened = false
  return {
    url: undefined,
    open: async () => {
      if (opened) throw new Error('a PGlite test database can be opened once')
      opened = true
      return openPglite({ loadDataDir: dump })
    },
    drop: async () => {},
  }
}
