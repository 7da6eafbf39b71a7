// Prepares one migrated database that every test file clones: a Postgres template database when
// DATABASE_URL is set (the real-Postgres run), otherwise a PGlite data-directory dump (the embedded run).
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { openPglite, openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import type { Database } from '../src/db/database.js'
import type { Kysely } from 'kysely'
import { loadConfig } from '../src/config.js'
import { maintainPartitions } from '../src/services/partitions.js'
import { TEST_CLOCK_START } from './helpers/test-clock.js'

declare module 'vitest' {
  export interface ProvidedContext {
    databaseMode: 'postgres' | 'pglite'
    runId: string
    adminUrl: string
    templateDatabase: string
    pgliteDumpPath: string
  }
}

export const databaseUrlFor = (adminUrl: string, database: string): string => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

interface Prepared {
  context: {
    databaseMode: 'postgres' | 'pglite'
    runId: string
    adminUrl: string
    templateDatabase: string
    pgliteDumpPath: string
  }
  teardown: () => Promise<void>
}

// The suite's projects (vitest.config.ts) and the root each call this setup, in one process: the database is prepared
// once, every project is given the same one, and the last teardown removes it.
const shared = globalThis as typeof globalThis & { canopyTestDatabase?: { prepared: Promise<Prepared>; users: number } }

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  shared.canopyTestDatabase ??= { prepared: prepare(), users: 0 }
  const state = shared.canopyTestDatabase
  state.users += 1
  const { context, teardown } = await state.prepared
  for (const [key, value] of Object.entries(context)) project.provide(key as keyof Prepared['context'], value)
  return async () => {
    state.users -= 1
    if (state.users === 0) {
      shared.canopyTestDatabase = undefined
      await teardown()
    }
  }
}

/**
 * Migrated, then maintained once at the tests' clock: the migrations make each partitioned table's months from the day
 * they run (the real date), the tests' clock starts on another (TEST_CLOCK_START), and a template without that month's
 * partitions would have every test app's partition worker create it under the test's traffic (DDL that deadlocks
 * with a writer, and plans read from the default partition instead).
 */
async function prepareSchema(db: Kysely<Database>): Promise<void> {
  await migrateToLatest(db)
  const config = loadConfig({})
  await maintainPartitions({
    db,
    clock: () => new Date(TEST_CLOCK_START.getTime()),
    retention: {
      quoteDays: config.QUOTE_RETENTION_DAYS,
      webhookAttemptDays: config.WEBHOOK_ATTEMPT_RETENTION_DAYS,
      taxReceiptDays: config.TAX_RECEIPT_RETENTION_DAYS,
    },
  })
}

async function prepare(): Promise<Prepared> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`
  const adminUrl = process.env.DATABASE_URL
  if (adminUrl) {
    const template = `canopy_tpl_${runId}`
    await adminQuery(adminUrl, `CREATE DATABASE ${template}`)
    const handle = openPostgres({ url: databaseUrlFor(adminUrl, template), poolMax: 1 })
    try {
      await prepareSchema(handle.db)
    } finally {
      // Postgres refuses to clone a template that has open connections.
      await handle.close()
    }
    return {
      context: { databaseMode: 'postgres', runId, adminUrl, templateDatabase: template, pgliteDumpPath: '' },
      teardown: async () => {
        const client = new pg.Client({ connectionString: adminUrl })
        await client.connect()
        try {
          const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [
            `canopy_%_${runId}%`,
          ])
          for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
        } finally {
          await client.end()
        }
      },
    }
  }
  const handle = await openPglite()
  const dir = mkdtempSync(join(tmpdir(), 'canopy-test-'))
  const dumpPath = join(dir, 'migrated.tar.gz')
  try {
    await prepareSchema(handle.db)
    const dump = await handle.dump?.()
    if (!dump) throw new Error('PGlite handle cannot dump its data directory')
    writeFileSync(dumpPath, Buffer.from(await dump.arrayBuffer()))
  } finally {
    await handle.close()
  }
  return {
    context: { databaseMode: 'pglite', runId, adminUrl: '', templateDatabase: '', pgliteDumpPath: dumpPath },
    teardown: async () => rmSync(dir, { recursive: true, force: true }),
  }
}
