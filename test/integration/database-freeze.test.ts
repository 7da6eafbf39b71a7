// A database link that stops answering (connection open, no replies): every request must end with
// 503 SERVICE_UNAVAILABLE + Retry-After within the configured bounds, /readyz within a second, the
// same app must recover by itself when the link comes back, and an allocation in flight during the
// freeze is either committed (its retry replays it) or absent (its retry creates it), never half.
// A TCP proxy between the app's pool and Postgres freezes the link (Postgres only: PGlite has none).
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { DatabaseTimeoutError, openConfiguredDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { ALLOCATION_STATEMENT_NAMES, findUnbalancedAllocations } from '../../src/db/repositories/allocations.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { until } from '../helpers/wait.js'

const CONNECT_TIMEOUT_MS = 500
const QUERY_TIMEOUT_MS = 1000
/** One statement: wait for a connection (or open one), then for its answer. */
const STATEMENT_BOUND_MS = CONNECT_TIMEOUT_MS + QUERY_TIMEOUT_MS
/** Scheduling slack on a shared 2-core machine. */
const SLACK_MS = 400

let database: TestDatabase
let direct: DatabaseHandle
let proxy: TcpProxy
let app: FastifyInstance
let org: OrgFixture
let quoteId: string
let allocationId: string

interface Timed {
  status: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
  ms: number
}

async function timed(method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Timed> {
  const started = performance.now()
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${org.apiKey}`, ...headers },
    ...(body === undefined ? {} : { payload: body as object }),
  })
  return { status: res.statusCode, headers: res.headers, body: res.body, ms: performance.now() - started }
}

const allocationBody = () => ({ organisationId: org.organisationId, quoteId, credits: { amount: 0.28 }, contribution: { amount: 1.99 } })
const allocate = (key: string) => timed('POST', '/funds/allocations', allocationBody(), { 'idempotency-key': key })

function expectUnavailable(res: Timed, boundMs: number): void {
  expect(res.status, res.body).toBe(503)
  expect(res.headers['retry-after']).toBe('1')
  expect(JSON.parse(res.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' })
  expect(res.ms).toBeLessThan(boundMs + SLACK_MS)
}

/**
 * The allocation INSERT on the wire: its text, as the query builder writes it (quoted identifier) or by hand, or the
 * name of its prepared statement (a connection sends the text once, then only the name).
 */
const INSERT_ALLOCATIONS = new RegExp(['insert into "?allocations"?', ...ALLOCATION_STATEMENT_NAMES].join('|'), 'i')

async function allocationsFor(key: string) {
  return direct.db
    .selectFrom('allocations')
    .select(['id'])
    .where('organisation_id', '=', org.organisationId)
    .where('idempotency_key', '=', key)
    .execute()
}

/** Exactly one allocation for `key`, balanced to the cent, and it is what the API answers. */
async function expectExactlyOne(key: string, body: string): Promise<void> {
  const rows = await allocationsFor(key)
  expect(rows).toHaveLength(1)
  expect(rows[0]?.id).toBe(JSON.parse(body).fundsAllocationId)
  expect(await findUnbalancedAllocations(direct.db)).toEqual([])
  const entries = await direct.db.selectFrom('allocation_entries').select('kind').where('allocation_id', '=', rows[0]!.id).execute()
  expect(entries.length).toBeGreaterThan(0)
}

/** After a freeze: the same app answers again, with a healthy pool (no connection left stuck). */
async function expectRecovered(): Promise<void> {
  const ready = await until(
    () => timed('GET', '/readyz'),
    (res) => res.status === 200,
  )
  expect(ready.status).toBe(200)
  for (let i = 0; i < 15; i++) {
    const res = await timed('GET', `/funds/allocations/${allocationId}`)
    expect(res.status, res.body).toBe(200)
    expect(res.ms).toBeLessThan(QUERY_TIMEOUT_MS)
  }
  const burst = await Promise.all(Array.from({ length: 12 }, () => timed('GET', `/v3/organisations/${org.organisationId}`)))
  expect(burst.map((res) => res.status)).toEqual(burst.map(() => 200))
}

describe.runIf(onPostgres())('a database link that stops answering (TCP proxy, real Postgres)', () => {
  beforeAll(async () => {
    database = await createTestDatabase()
    direct = await database.open(2)
    await importDemoCatalogue(direct.db)
    org = await createOrg(direct.db)
    const target = new URL(database.url!)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
    // Nothing cached, so that every request reaches the database.
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATABASE_URL: proxy.url(database.url!),
      DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: '800',
      IDEMPOTENCY_LOCK_TIMEOUT_MS: '400',
      AUTH_CACHE_TTL_MS: '0',
      CATALOGUE_CACHE_TTL_MS: '0',
      QUOTE_CACHE_SIZE: '0',
      RATE_LIMIT_PER_MINUTE: '1000000',
    })
    app = await buildApp({ config, database: await openConfiguredDatabase(config) })
    await app.ready()
    const quote = await timed('POST', '/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.status, quote.body).toBe(201)
    quoteId = JSON.parse(quote.body).quoteId
    const allocation = await allocate(randomUUID())
    expect(allocation.status, allocation.body).toBe(201)
    allocationId = JSON.parse(allocation.body).fundsAllocationId
  })
  afterAll(async () => {
    proxy?.resume()
    await app?.close()
    await proxy?.close()
    await direct?.close()
    await database?.drop()
  })
  beforeEach(async () => {
    // Every case starts with a pool of open, idle connections through the proxy.
    await Promise.all(Array.from({ length: 6 }, () => timed('GET', `/v3/organisations/${org.organisationId}`)))
  })

  it('frozen: every route that needs the database answers 503 + Retry-After within its bound, /readyz within a second, /healthz 200', async () => {
    proxy.freeze()
    try {
      const [ready, health, quote, read, organisation, child, created, ...more] = await Promise.all([
        timed('GET', '/readyz'),
        timed('GET', '/healthz'),
        timed('POST', '/quotes/carbon', floristQuote(org.organisationId)),
        timed('GET', `/funds/allocations/${allocationId}`),
        timed('GET', `/v3/organisations/${org.organisationId}`),
        // A transaction: its ROLLBACK must not wait behind the statement that timed out.
        timed('POST', '/v3/organisations', {
          parentOrganisationId: org.organisationId,
          tradingName: 'Frozen Child',
          legalName: 'Frozen Child Ltd',
          address: { line1: '1 A St', city: 'Leeds', postalCode: 'LS1 1AA', countryCode: 'GBR' },
          currencyCode: 'GBP',
        }),
        allocate(randomUUID()),
        // More requests than the pool has connections: some wait for one.
        ...Array.from({ length: 12 }, () => timed('GET', `/funds/allocations/${allocationId}`)),
      ])
      expect(health.status).toBe(200)
      expectUnavailable(ready!, 1000)
      for (const res of [quote!, read!, organisation!, child!, created!, ...more]) expectUnavailable(res, STATEMENT_BOUND_MS)
      // Still frozen, with every pooled connection that was stuck gone: the same answers, as fast.
      expectUnavailable(await timed('GET', '/readyz'), 1000)
      expectUnavailable(await timed('GET', `/funds/allocations/${allocationId}`), STATEMENT_BOUND_MS)
    } finally {
      proxy.resume()
    }
    await expectRecovered()
  })

  it('an allocation whose INSERT reached Postgres but whose answer never came: 503, then its retry replays it', async () => {
    const key = randomUUID()
    const frozen = proxy.freezeOn(INSERT_ALLOCATIONS, 'after')
    const first = allocate(key)
    await frozen
    expectUnavailable(await first, STATEMENT_BOUND_MS)
    // Postgres committed it (the statement ran; only its answer is held).
    expect(
      await until(
        () => allocationsFor(key),
        (rows) => rows.length === 1,
      ),
    ).toHaveLength(1)
    proxy.resume()
    const retry = await until(
      () => allocate(key),
      (res) => res.status !== 503,
    )
    expect(retry.status, retry.body).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    await expectExactlyOne(key, retry.body)
    await expectRecovered()
  })

  it('an allocation whose INSERT never reached Postgres: 503, nothing stored, then its retry creates it', async () => {
    const key = randomUUID()
    const frozen = proxy.freezeOn(INSERT_ALLOCATIONS, 'before')
    const first = allocate(key)
    await frozen
    expectUnavailable(await first, STATEMENT_BOUND_MS)
    expect(await allocationsFor(key)).toHaveLength(0)
    // The app dropped the connection it gave up on; what was in flight on it is lost with it.
    expect(
      await until(
        async () => proxy.orphans(),
        (n) => n === 1,
      ),
    ).toBe(1)
    proxy.resume({ deliverOrphans: false })
    const retry = await until(
      () => allocate(key),
      (res) => res.status !== 503,
    )
    expect(retry.status, retry.body).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    await expectExactlyOne(key, retry.body)
    await expectRecovered()
  })

  it('concurrent allocations written in one coalesced INSERT: 503 within twice the bound (a statement before theirs, then theirs), then replayed', async () => {
    const keys = Array.from({ length: 5 }, () => randomUUID())
    const frozen = proxy.freezeOn(INSERT_ALLOCATIONS, 'after')
    const first = Promise.all(keys.map((key) => allocate(key)))
    await frozen
    for (const res of await first) expectUnavailable(res, 2 * STATEMENT_BOUND_MS)
    proxy.resume()
    for (const key of keys) {
      const retry = await until(
        () => allocate(key),
        (res) => res.status !== 503,
      )
      expect(retry.status, retry.body).toBe(201)
      await expectExactlyOne(key, retry.body)
    }
    await expectRecovered()
  })

  it('a transaction whose statement gets no answer fails within one bound (its ROLLBACK does not queue behind it), and the pool recovers', async () => {
    const handle = await openConfiguredDatabase(
      loadConfig({
        DATABASE_URL: proxy.url(database.url!),
        DATABASE_POOL_MAX: '1',
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        DATABASE_STATEMENT_TIMEOUT_MS: '800',
        IDEMPOTENCY_LOCK_TIMEOUT_MS: '400',
      }),
    )
    try {
      await sql`SELECT 1`.execute(handle.db)
      proxy.freeze()
      const started = performance.now()
      const failed = await handle.db
        .transaction()
        .execute((trx) => sql`SELECT 1`.execute(trx))
        .then(
          () => undefined,
          (error: unknown) => error,
        )
      expect(failed).toBeInstanceOf(DatabaseTimeoutError)
      expect(performance.now() - started).toBeLessThan(QUERY_TIMEOUT_MS + SLACK_MS)
      proxy.resume()
      // The only connection was the stuck one: it is gone, and a new one answers at once.
      const { rows } = await sql<{ n: number }>`SELECT 2 AS n`.execute(handle.db)
      expect(rows).toEqual([{ n: 2 }])
    } finally {
      proxy.resume()
      await handle.close()
    }
  })

  it('an app closing while the link is frozen still closes within a few seconds (shutdown is not held hostage)', async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: proxy.url(database.url!) })
    const other = await buildApp({ config, database: await openConfiguredDatabase(config) })
    await other.ready()
    const warm = await Promise.all(Array.from({ length: 3 }, () => other.inject({ url: '/readyz' })))
    expect(warm.map((res) => res.statusCode)).toEqual([200, 200, 200])
    proxy.freeze()
    try {
      const started = performance.now()
      await other.close()
      expect(performance.now() - started).toBeLessThan(3_000)
    } finally {
      proxy.resume()
    }
  })

  it('an app closing with a statement unanswered on the frozen link closes within the pool quiet wait and a moment', async () => {
    // A background worker's query in flight when the link froze (a table statistics run, say) held shutdown for the
    // pool's whole quiet wait and then its graceful end, each bounded, one after the other (2 s here; the test above
    // then came to 3 s). The workers are off here so that only the statement started below is in flight.
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      DATABASE_URL: proxy.url(database.url!),
      TABLE_STATISTICS_WORKER: 'false',
      PARTITION_MAINTENANCE: 'false',
      SUMMARY_ROLLUP_WORKER: 'false',
    })
    const handle = await openConfiguredDatabase(config)
    const other = await buildApp({ config, database: handle })
    await other.ready()
    const warm = await Promise.all(Array.from({ length: 3 }, () => other.inject({ url: '/readyz' })))
    expect(warm.map((res) => res.statusCode)).toEqual([200, 200, 200])
    const stuck = sql`SELECT pg_sleep(30)`.execute(handle.db).then(
      () => 'answered',
      () => 'failed',
    )
    await new Promise((resolve) => setTimeout(resolve, 200))
    proxy.freeze()
    try {
      const started = performance.now()
      await other.close()
      expect(performance.now() - started).toBeLessThan(1_800)
      // Its connection was closed under it: the statement failed rather than waiting out the link.
      expect(await stuck).toBe('failed')
    } finally {
      proxy.resume()
    }
  })

  it.each([0, 1, 2, 4, 8])(
    'an allocation with the link freezing %i ms after it was sent: all of it or none, and its retry settles it',
    async (delayMs) => {
      const key = randomUUID()
      const first = allocate(key)
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      proxy.freeze()
      const answered = await first
      if (answered.status !== 201) expectUnavailable(answered, STATEMENT_BOUND_MS)
      proxy.resume()
      const retry = await until(
        () => allocate(key),
        (res) => res.status !== 503,
      )
      expect(retry.status, retry.body).toBe(201)
      if (answered.status === 201) expect(retry.body).toBe(answered.body)
      await expectExactlyOne(key, retry.body)
    },
  )
})
