// Reads on a replica (issue 23): with DATABASE_REPLICA_URL naming the standby of a real primary/standby pair,
// reconciliation pages and exports are served by the standby (seen in its pg_stat_activity) while writes, the API key
// and reads by id stay on the primary; a lagging standby (replay paused) and a stopped one are skipped, with a warning
// and a metric, and used again once well; a read by id never answers 404 because the standby lags; and a replica that
// cannot be reached at start-up is a warning, not a crash. Postgres run only: the cluster is started here.
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openConfiguredDatabase, openPostgres, type DatabaseHandle } from '../../src/db/connect.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import type { ReplicaStatus } from '../../src/db/replica.js'
import { PrometheusMetrics } from '../../src/metrics.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { closeClusters, describeWithCluster, startCluster, type PgCluster } from '../helpers/pg-cluster.js'
import { freePort } from '../helpers/process.js'

/** Short bounds, so that skipping and recovering take a fraction of a second. */
const MAX_LAG_MS = 300
const CHECK_INTERVAL_MS = 100
/** The page query's own column alias: how its statements are told from others in pg_stat_activity. */
/** A page's two reads: its keys (the stream's funds_date_time), then its allocations (allocated_at). */
const PAGE_QUERY = 'funds_date_time|allocated_at'

interface ReadingApp {
  app: FastifyInstance
  database: DatabaseHandle
  metrics: PrometheusMetrics
  logs: string[]
}

let cluster: PgCluster
let org: OrgFixture
let quoteId: string
const apps: ReadingApp[] = []

async function startApp(env: Record<string, string>): Promise<ReadingApp> {
  const config = loadConfig({
    LOG_LEVEL: 'info',
    DATABASE_URL: cluster.primary.url('canopy'),
    DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
    DATABASE_REPLICA_CHECK_INTERVAL_MS: String(CHECK_INTERVAL_MS),
    DATABASE_CONNECT_TIMEOUT_MS: '500',
    DATABASE_QUERY_TIMEOUT_MS: '2000',
    DATABASE_STATEMENT_TIMEOUT_MS: '1500',
    IDEMPOTENCY_LOCK_TIMEOUT_MS: '500',
    WEBHOOK_WORKER: 'false',
    ...env,
  })
  const logs: string[] = []
  const logStream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString('utf8').split('\n').filter(Boolean))
      done()
    },
  })
  const database = await openConfiguredDatabase(config)
  const metrics = new PrometheusMetrics()
  const app = await buildApp({ config, database, logStream, metrics })
  await app.ready()
  const started = { app, database, metrics, logs }
  apps.push(started)
  return started
}

async function until<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const status = (reader: ReadingApp): ReplicaStatus => reader.database.replica!.status()
const inUse = (reader: ReadingApp) =>
  until(
    () => status(reader),
    (s) => s.state === 'in-use',
    'the replica in use',
  )

const request = (reader: ReadingApp, method: 'GET' | 'POST', url: string, body?: object, headers: Record<string, string> = {}) =>
  reader.app.inject({ method, url, headers: { authorization: `Bearer ${org.apiKey}`, ...headers }, ...(body ? { payload: body } : {}) })

async function allocate(reader: ReadingApp): Promise<string> {
  const res = await request(
    reader,
    'POST',
    '/funds/allocations',
    { organisationId: org.organisationId, quoteId, credits: { amount: 0.28 }, contribution: { amount: 1.99 } },
    { 'idempotency-key': randomUUID() },
  )
  expect(res.statusCode, res.body).toBe(201)
  return res.json().fundsAllocationId
}

const DAY_MS = 86_400_000
const WINDOW = `dateTimeFrom=${new Date(Date.now() - DAY_MS).toISOString()}&dateTimeTo=${new Date(Date.now() + DAY_MS).toISOString()}`
async function listedIds(reader: ReadingApp, extra = ''): Promise<string[]> {
  const res = await request(reader, 'GET', `/funds/allocations/impact?${WINDOW}&limit=100${extra}`)
  expect(res.statusCode, res.body).toBe(200)
  return res.json().data.map((r: { fundsAllocationId: string }) => r.fundsAllocationId)
}

/** Sessions of the replica's pool that ran a reconciliation page, on `server`. */
const pageReadsOn = async (server: PgCluster['primary']) =>
  Number(
    (
      await server.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'canopy' AND application_name = 'canopy-reads' AND query ~ $1`,
        [PAGE_QUERY],
      )
    )[0]!.n,
  )

const replayedOnStandby = async (allocationId: string) =>
  (await cluster.standby.query('SELECT 1 FROM allocations WHERE id = $1', [allocationId], 'canopy')).length === 1

const metric = async (reader: ReadingApp, sample: string): Promise<number | undefined> => {
  const line = (await reader.metrics.scrape()).split('\n').find((l) => l.startsWith(`${sample} `))
  return line === undefined ? undefined : Number(line.slice(sample.length + 1))
}

const logged = (reader: ReadingApp, level: number, text: string) =>
  reader.logs.some((line) => {
    const entry = JSON.parse(line) as { level: number; msg: string }
    return entry.level === level && entry.msg.includes(text)
  })

describeWithCluster('reads on a replica (own Postgres cluster)', onPostgres(), () => {
  let strict: ReadingApp

  beforeAll(async () => {
    cluster = await startCluster({
      synchronous: false,
      prepare: async (primary) => {
        await primary.query('CREATE DATABASE canopy')
        const setup = openPostgres({ url: primary.url('canopy'), poolMax: 2, statementTimeoutMs: 60_000, queryTimeoutMs: 65_000 })
        try {
          await migrateToLatest(setup.db)
          await importDemoCatalogue(setup.db)
          org = await createOrg(setup.db)
        } finally {
          await setup.close()
        }
      },
    })
    strict = await startApp({ DATABASE_REPLICA_URL: cluster.standby.url('canopy') })
    const quote = await request(strict, 'POST', '/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.statusCode, quote.body).toBe(201)
    quoteId = quote.json().quoteId
  })

  afterAll(async () => {
    for (const { app } of apps) await app.close()
    await closeClusters()
  })

  it('serves pages and exports from the replica, and writes, keys and reads by id from the primary', async () => {
    const allocationId = await allocate(strict)
    await until(() => replayedOnStandby(allocationId), Boolean, 'the allocation on the standby')
    await inUse(strict)
    // A few at once, so that some of the replica pool's sessions still show the page after the next health check.
    const pages = await Promise.all(Array.from({ length: 4 }, () => listedIds(strict)))
    for (const ids of pages) expect(ids).toContain(allocationId)
    expect(await pageReadsOn(cluster.standby)).toBeGreaterThan(0)
    expect(await pageReadsOn(cluster.primary)).toBe(0)
    // The replica's pool never connects to the primary, and the primary's never to the replica.
    const primarySessions = await cluster.primary.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'canopy-reads'`)
    const replicaSessions = await cluster.standby.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'canopy'`)
    expect(primarySessions).toEqual([])
    expect(replicaSessions).toEqual([])

    const csv = await request(strict, 'GET', `/funds/allocations/impact/export?${WINDOW}`)
    expect(csv.statusCode).toBe(200)
    expect(csv.body).toContain(allocationId)
    expect(await metric(strict, 'canopy_db_replica_in_use')).toBe(1)
    expect(await metric(strict, 'canopy_db_replica_lag_seconds')).toBeLessThan(MAX_LAG_MS / 1000)
    expect(logged(strict, 30, 'read replica in use')).toBe(true)
  })

  it('skips a replica whose replay lags (replay paused), reads the newest records on the primary, and uses it again once caught up', async () => {
    await inUse(strict)
    const skipsBefore = (await metric(strict, 'canopy_db_replica_skips_total{reason="lagging"}')) ?? 0
    await cluster.standby.query('SELECT pg_wal_replay_pause()')
    try {
      const newest = await allocate(strict)
      const skipped = await until(
        () => status(strict),
        (s) => s.state === 'skipped',
        'the replica skipped',
      )
      expect(skipped).toMatchObject({ reason: 'lagging' })
      expect(skipped.lagMs).toBeGreaterThan(MAX_LAG_MS)
      expect(await replayedOnStandby(newest)).toBe(false)
      expect(await listedIds(strict)).toContain(newest)
      expect((await request(strict, 'GET', `/funds/allocations/${newest}/impact`)).statusCode).toBe(200)
      expect(await metric(strict, 'canopy_db_replica_in_use')).toBe(0)
      expect(await metric(strict, 'canopy_db_replica_skips_total{reason="lagging"}')).toBe(skipsBefore + 1)
      expect(logged(strict, 40, 'read replica skipped (lagging)')).toBe(true)
    } finally {
      await cluster.standby.query('SELECT pg_wal_replay_resume()')
    }
    await inUse(strict)
    expect(logged(strict, 30, 'read replica in use again')).toBe(true)
  })

  it('never answers 404 for a record the lagging replica has not replayed yet: reads by id fall back to the primary', async () => {
    // A bound so loose that the paused replica stays in use: its pages miss the newest record, reads by id do not.
    const loose = await startApp({ DATABASE_REPLICA_URL: cluster.standby.url('canopy'), DATABASE_REPLICA_MAX_LAG_MS: '3600000' })
    await inUse(loose)
    await cluster.standby.query('SELECT pg_wal_replay_pause()')
    try {
      const unreplayed = await allocate(loose)
      await new Promise((resolve) => setTimeout(resolve, 3 * CHECK_INTERVAL_MS))
      expect(status(loose).state).toBe('in-use')
      expect(await listedIds(loose)).not.toContain(unreplayed)
      expect((await request(loose, 'GET', `/funds/allocations/${unreplayed}/impact`)).statusCode).toBe(200)
      expect((await request(loose, 'GET', `/funds/allocations/${unreplayed}`)).statusCode).toBe(200)
      // A cursor the replica does not know yet is not INVALID_CURSOR either.
      const after = await request(loose, 'GET', `/funds/allocations/impact?${WINDOW}&startingAfter=${unreplayed}`)
      expect(after.statusCode, after.body).toBe(200)
    } finally {
      await cluster.standby.query('SELECT pg_wal_replay_resume()')
    }
  })

  it('falls back to the primary when the replica stops, without a failed read, and uses it again once it is back', async () => {
    await inUse(strict)
    const known = await allocate(strict)
    await until(() => replayedOnStandby(known), Boolean, 'the allocation on the standby')
    await cluster.stopStandby('fast')
    // Reads keep answering while the replica goes away: a failed statement is run again on the primary.
    for (let i = 0; i < 10; i++) expect(await listedIds(strict)).toContain(known)
    const skipped = await until(
      () => status(strict),
      (s) => s.state === 'skipped',
      'the replica skipped',
    )
    expect(skipped.reason).toBe('unavailable')
    expect(logged(strict, 40, 'read replica skipped (unavailable)')).toBe(true)
    expect(await metric(strict, 'canopy_db_replica_skips_total{reason="unavailable"}')).toBeGreaterThanOrEqual(1)
    await cluster.startStandby()
    await inUse(strict)
    expect(await listedIds(strict)).toContain(known)
  })

  it('starts with a replica that cannot be reached: a warning, every read on the primary, no crash', async () => {
    const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/canopy`
    const reader = await startApp({ DATABASE_REPLICA_URL: nowhere })
    await until(
      () => status(reader),
      (s) => s.state === 'skipped',
      'the replica skipped',
    )
    expect(status(reader).reason).toBe('unavailable')
    expect(logged(reader, 40, 'read replica skipped (unavailable)')).toBe(true)
    const id = await allocate(reader)
    expect(await listedIds(reader)).toContain(id)
    expect((await request(reader, 'GET', '/readyz')).statusCode).toBe(200)
  })
})
