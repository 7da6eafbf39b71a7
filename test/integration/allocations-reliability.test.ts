// Guarantees that must hold across processes and crashes: they live in Postgres, not in memory.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findUnbalancedAllocations } from '../../src/db/repositories/allocations.js'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/process.js'

let database: TestDatabase
let handle: DatabaseHandle
let org: OrgFixture
const servers: ServerProcess[] = []

const serverEnv = () => ({ DATABASE_URL: database.url ?? '', RATE_LIMIT_PER_MINUTE: '1000000', LOG_LEVEL: 'info' })

async function start(): Promise<{ server: ServerProcess; baseUrl: string }> {
  const server = startServer(serverEnv())
  servers.push(server)
  return { server, baseUrl: await server.ready }
}

async function call(baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${org.apiKey}`, ...headers },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: await res.text(), replayed: res.headers.get('idempotent-replayed') === 'true' }
}

/** Runs `tasks` with at most `limit` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], limit: number): Promise<PromiseSettledResult<T>[]> {
  const results: PromiseSettledResult<T>[] = new Array(tasks.length)
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++
        try {
          results[i] = { status: 'fulfilled', value: await tasks[i]!() }
        } catch (reason) {
          results[i] = { status: 'rejected', reason }
        }
      }
    }),
  )
  return results
}

describe.runIf(onPostgres())('allocations across processes and crashes (real Postgres)', () => {
  let quoteId: string
  const allocationBody = (quote: string) => ({
    organisationId: org.organisationId,
    quoteId: quote,
    credits: { amount: 0.28 },
    contribution: { amount: 1.99 },
  })

  beforeAll(async () => {
    database = await createTestDatabase()
    handle = await database.open(2)
    await importDemoCatalogue(handle.db)
    org = await createOrg(handle.db)
  })
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL')
    await handle.close()
    await database.drop()
  })

  it('two API processes on one database: the same keys sent to both give one allocation per key', async () => {
    const [a, b] = await Promise.all([start(), start()])
    quoteId = JSON.parse((await call(a.baseUrl, '/quotes/carbon', floristQuote(org.organisationId))).body).quoteId
    const keys = Array.from({ length: 60 }, () => randomUUID())
    const results = await Promise.all(
      keys.map(async (key) => {
        const [fromA, fromB] = await Promise.all([
          call(a.baseUrl, '/funds/allocations', allocationBody(quoteId), { 'idempotency-key': key }),
          call(b.baseUrl, '/funds/allocations', allocationBody(quoteId), { 'idempotency-key': key }),
        ])
        return { key, fromA, fromB }
      }),
    )
    for (const { fromA, fromB } of results) {
      for (const r of [fromA, fromB]) expect([201, 409]).toContain(r.status)
      if (fromA.status === 201 && fromB.status === 201) expect(fromB.body).toBe(fromA.body)
    }
    const { rows } = await sql<{ idempotency_key: string; n: number }>`
      SELECT idempotency_key, count(*)::int AS n FROM allocations WHERE idempotency_key = ANY(${keys}) GROUP BY idempotency_key`.execute(
      handle.db,
    )
    expect(rows).toHaveLength(keys.length)
    for (const row of rows) expect(row.n).toBe(1)
    a.server.child.kill('SIGTERM')
    b.server.child.kill('SIGTERM')
    await Promise.all([a.server.exited, b.server.exited])
  })

  it('a SIGKILL mid-load loses nothing acknowledged and writes nothing twice or in part', async () => {
    const first = await start()
    const keys = Array.from({ length: 400 }, () => randomUUID())
    const acknowledged = new Map<string, string>()
    let killed = false
    const tasks = keys.map((key) => async () => {
      const res = await call(first.baseUrl, '/funds/allocations', allocationBody(quoteId), { 'idempotency-key': key })
      if (res.status === 201) acknowledged.set(key, res.body)
      if (!killed && acknowledged.size >= 120) {
        killed = true
        first.server.child.kill('SIGKILL')
      }
      return res
    })
    const outcomes = await pool(tasks, 16)
    expect(killed).toBe(true)
    expect(outcomes.some((o) => o.status === 'rejected')).toBe(true)
    expect(await first.server.exited).toBe(null)

    const second = await start()
    const replays = await pool(
      keys.map((key) => () => call(second.baseUrl, '/funds/allocations', allocationBody(quoteId), { 'idempotency-key': key })),
      16,
    )
    for (const [i, outcome] of replays.entries()) {
      expect(outcome.status).toBe('fulfilled')
      if (outcome.status !== 'fulfilled') continue
      expect(outcome.value.status).toBe(201)
      const original = acknowledged.get(keys[i]!)
      if (original !== undefined) {
        expect(outcome.value.replayed).toBe(true)
        expect(outcome.value.body).toBe(original)
      }
    }
    const perKey = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM allocations WHERE idempotency_key = ANY(${keys}) GROUP BY idempotency_key`.execute(handle.db)
    expect(perKey.rows).toHaveLength(keys.length)
    expect(perKey.rows.every((r) => r.n === 1)).toBe(true)
    // No partial rows: every allocation has all its entries (3 projects + 2 partners) and balances exactly.
    const partial = await sql<{ id: string }>`
      SELECT a.id FROM allocations a LEFT JOIN allocation_entries e ON e.allocation_id = a.id
      GROUP BY a.id HAVING count(e.*) <> 5`.execute(handle.db)
    expect(partial.rows).toEqual([])
    expect(await findUnbalancedAllocations(handle.db)).toEqual([])
    second.server.child.kill('SIGTERM')
    expect(await second.server.exited).toBe(0)
  })
})
