// The replicas story: two real API processes on one Postgres and one Redis (127.0.0.1:6379, or TEST_REDIS_URL;
// .ci/run starts it). The rate limit is shared, an Idempotency-Key is honoured across them, a key rotated through
// one expires on the other within AUTH_CACHE_TTL_MS, and with Redis unreachable requests are still served.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { createApiKey } from '../../src/services/api-keys.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue } from '../helpers/factories.js'
import { freePort, startServer, type ServerProcess } from '../helpers/process.js'

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const RATE_LIMIT = 10
const AUTH_CACHE_TTL_MS = 1000

interface Replica {
  server: ServerProcess
  baseUrl: string
  metricsUrl: string
}

let database: TestDatabase
let handle: DatabaseHandle
const servers: ServerProcess[] = []
let a: Replica
let b: Replica

async function start(env: Record<string, string> = {}): Promise<Replica> {
  const metricsPort = await freePort()
  const server = startServer({
    DATABASE_URL: database.url ?? '',
    REDIS_URL,
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    AUTH_CACHE_TTL_MS: String(AUTH_CACHE_TTL_MS),
    METRICS_PORT: String(metricsPort),
    ...env,
  })
  servers.push(server)
  return { server, baseUrl: await server.ready, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` }
}

async function call(replica: Replica, key: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${replica.baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

const metricValue = (text: string, sample: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `))
  return line === undefined ? undefined : Number(line.slice(sample.length + 1))
}

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null })
  redis.on('error', () => {})
  try {
    await redis.connect()
    return (await redis.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    redis.disconnect()
  }
}

describe.runIf(onPostgres())('two API processes on one Postgres and one Redis', () => {
  beforeAll(async () => {
    if (!(await redisAnswers())) {
      throw new Error(`Redis does not answer at ${REDIS_URL}: start it (see .ci/run) or set TEST_REDIS_URL`)
    }
    database = await createTestDatabase()
    handle = await database.open(2)
    await importDemoCatalogue(handle.db)
    ;[a, b] = await Promise.all([start(), start()])
  }, 180_000)
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL')
    await handle?.close()
    await database?.drop()
  })

  it('share one rate limit: 10 a minute across both, then 429 with Retry-After from either', async () => {
    const org = await createOrg(handle.db)
    const path = `/v3/organisations/${org.organisationId}`
    for (let i = 0; i < RATE_LIMIT; i++) {
      const res = await call(i % 2 ? b : a, org.apiKey, path)
      expect(res.status, `request ${i + 1}`).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(RATE_LIMIT - i - 1))
    }
    for (const replica of [a, b]) {
      const limited = await call(replica, org.apiKey, path)
      expect(limited.status).toBe(429)
      expect(JSON.parse(limited.text)).toMatchObject({ code: 'TOO_MANY_REQUESTS' })
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    }
    // Another key has its own budget.
    const other = await createOrg(handle.db)
    expect((await call(b, other.apiKey, `/v3/organisations/${other.organisationId}`)).status).toBe(200)
  })

  it('serve metrics on their own port only, and saw no Redis failure', async () => {
    for (const replica of [a, b]) {
      expect((await fetch(`${replica.baseUrl}/metrics`)).status).toBe(404)
      const res = await fetch(replica.metricsUrl)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      const text = await res.text()
      expect(metricValue(text, 'canopy_rate_limit_store_errors_total')).toBe(0)
      expect(metricValue(text, 'http_request_duration_seconds_count{method="GET",route="/organisations/:id",status_class="4xx"}')).toBe(1)
      expect(metricValue(text, 'canopy_db_pool_max_clients')).toBe(10)
      expect((await fetch(replica.metricsUrl.replace('/metrics', '/'))).status).toBe(404)
    }
  })

  it('the same Idempotency-Key sent to both gives one allocation', async () => {
    const org = await createOrg(handle.db)
    const quote = await call(a, org.apiKey, '/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.status).toBe(201)
    const body = { organisationId: org.organisationId, quoteId: JSON.parse(quote.text).quoteId, contribution: { amount: 1.99 } }
    const keys = Array.from({ length: 4 }, () => randomUUID())
    const results = await Promise.all(
      keys.map((key) =>
        Promise.all([
          call(a, org.apiKey, '/funds/allocations', body, { 'idempotency-key': key }),
          call(b, org.apiKey, '/funds/allocations', body, { 'idempotency-key': key }),
        ]),
      ),
    )
    for (const [fromA, fromB] of results) {
      for (const r of [fromA, fromB]) expect([201, 409]).toContain(r.status)
      if (fromA.status === 201 && fromB.status === 201) expect(fromB.text).toBe(fromA.text)
    }
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM allocations WHERE idempotency_key = ANY(${keys}) GROUP BY idempotency_key`.execute(handle.db)
    expect(rows.map((r) => r.n)).toEqual([1, 1, 1, 1])
  })

  it('a key rotated through one is honoured on the other, then refused there within the auth cache TTL of its expiry', async () => {
    const org = await createOrg(handle.db)
    const admin = await createApiKey(handle.db, org.organisationId, 'live', new Date())
    const path = `/v3/organisations/${org.organisationId}`
    expect((await call(b, org.apiKey, path)).status).toBe(200) // cached on B before the rotation

    const keyId = JSON.parse((await call(a, admin.apiKey, `/v3/api-keys?organisationId=${org.organisationId}`)).text).keys[0].id
    const rotated = await call(a, admin.apiKey, `/v3/api-keys/${keyId}/rotate`, { expireOldInSeconds: 3 })
    expect(rotated.status).toBe(201)
    const { apiKey: newKey, previousKey } = JSON.parse(rotated.text)
    const expiresAt = Date.parse(previousKey.expiresAt)

    expect((await call(b, newKey, path)).status).toBe(200)
    expect((await call(a, newKey, path)).status).toBe(200)
    expect((await call(b, org.apiKey, path)).status).toBe(200) // within its grace period
    expect((await call(a, org.apiKey, path)).status).toBe(200)

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now())))
    let refusedAt: number | undefined
    while (Date.now() < expiresAt + AUTH_CACHE_TTL_MS + 3000) {
      const res = await call(b, org.apiKey, path)
      if (res.status === 401) {
        refusedAt = Date.now()
        break
      }
      expect(res.status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(refusedAt).toBeDefined()
    // B re-read the key within the TTL after the rotation, so it knew the expiry: refused within the TTL of it.
    expect(refusedAt! - expiresAt).toBeLessThanOrEqual(AUTH_CACHE_TTL_MS + 1500)
    expect((await call(a, org.apiKey, path)).status).toBe(401)
    expect((await call(b, newKey, path)).status).toBe(200)
  })

  it('with Redis unreachable, requests are still served, and the failures are counted', async () => {
    const closedPort = await freePort()
    const lonely = await start({ REDIS_URL: `redis://127.0.0.1:${closedPort}` })
    const org = await createOrg(handle.db)
    for (let i = 0; i < RATE_LIMIT + 2; i++) {
      expect((await call(lonely, org.apiKey, `/v3/organisations/${org.organisationId}`)).status).toBe(200)
    }
    const text = await (await fetch(lonely.metricsUrl)).text()
    expect(metricValue(text, 'canopy_rate_limit_store_errors_total')).toBe(RATE_LIMIT + 2)
    expect(lonely.server.output()).toMatch(/rate-limit store \(Redis\) is failing/)
    lonely.server.child.kill('SIGTERM')
    expect(await lonely.server.exited).toBe(0)
  }, 120_000)
})
