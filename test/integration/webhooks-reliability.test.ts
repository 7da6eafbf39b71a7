// Durable delivery across failures and crashes: hundreds of allocations and reversals go to two endpoints whose
// receivers fail for a while, and the API process is SIGKILLed mid-run and restarted. Every (event, endpoint)
// pair ends with a 2xx verified with the standardwebhooks library; duplicates only ever repeat a webhook-id.
import { randomUUID } from 'node:crypto'
import { sql } from 'kysely'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DatabaseHandle } from '../../src/db/connect.js'
import { createOrg, floristQuote, importDemoCatalogue, type OrgFixture } from '../helpers/factories.js'
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/db.js'
import { startServer, type ServerProcess } from '../helpers/process.js'
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js'

const ALLOCATIONS = 300
const REVERSE_EVERY = 3

let database: TestDatabase
let handle: DatabaseHandle
let org: OrgFixture
const servers: ServerProcess[] = []
const receivers: WebhookReceiver[] = []

const serverEnv = () => ({
  DATABASE_URL: database.url ?? '',
  RATE_LIMIT_PER_MINUTE: '1000000',
  LOG_LEVEL: 'info',
  WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,4s,4s,4s,4s,4s,4s,4s,4s',
  WEBHOOK_LEASE_SECONDS: '20',
  WEBHOOK_POLL_INTERVAL_MS: '250',
})

async function start(): Promise<{ server: ServerProcess; baseUrl: string }> {
  const server = startServer(serverEnv())
  servers.push(server)
  return { server, baseUrl: await server.ready }
}

async function call(baseUrl: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: await res.text() }
}

/** Runs `tasks` with at most `limit` in flight; a task that throws (the server was killed) counts as settled. */
async function pool(tasks: (() => Promise<unknown>)[], limit: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < tasks.length) {
        const i = next++
        await tasks[i]!().catch(() => undefined)
      }
    }),
  )
}

describe.runIf(onPostgres())('webhook delivery across receiver failures and a SIGKILL (real Postgres)', () => {
  beforeAll(async () => {
    database = await createTestDatabase()
    handle = await database.open(2)
    await importDemoCatalogue(handle.db)
    org = await createOrg(handle.db)
  })
  afterAll(async () => {
    for (const s of servers) s.child.kill('SIGKILL')
    for (const r of receivers) await r.close()
    await handle.close()
    await database.drop()
  })

  it(
    'every (event, endpoint) pair ends with a verified 2xx: none lost, duplicates only with the same webhook-id',
    { timeout: 240_000 },
    async () => {
      // Both receivers answer 503 for their first seconds, then 2xx (one with 204).
      const failUntil = Date.now() + 6000
      for (const status of [200, 204]) receivers.push(await startReceiver(() => ({ status: Date.now() < failUntil ? 503 : status })))

      const first = await start()
      const secrets: string[] = []
      for (const receiver of receivers) {
        const res = await call(first.baseUrl, '/v3/webhook-endpoints', { organisationId: org.organisationId, url: receiver.url })
        expect(res.status).toBe(201)
        secrets.push(JSON.parse(res.body).secret)
      }
      const quoteId = JSON.parse((await call(first.baseUrl, '/quotes/carbon', floristQuote(org.organisationId))).body).quoteId

      // Acknowledged writes: allocation ids, and reversal ids (as event data carries them).
      const acknowledged = new Set<string>()
      let current = first
      let killed = false
      const keys = Array.from({ length: ALLOCATIONS }, () => randomUUID())
      const allocateAndMaybeReverse = (key: string, i: number) => async () => {
        const allocated = await call(
          current.baseUrl,
          '/funds/allocations',
          { organisationId: org.organisationId, quoteId, credits: { amount: 0.28 } },
          { 'idempotency-key': key },
        )
        if (allocated.status !== 201) return
        const id = JSON.parse(allocated.body).fundsAllocationId as string
        acknowledged.add(id)
        if (!killed && acknowledged.size >= ALLOCATIONS / 3) {
          killed = true
          first.server.child.kill('SIGKILL')
        }
        if (i % REVERSE_EVERY === 0) {
          const reversed = await call(current.baseUrl, `/funds/allocations/${id}/reverse`)
          if (reversed.status === 201) acknowledged.add(JSON.parse(reversed.body).reversalId)
        }
      }
      await pool(
        keys.map((key, i) => allocateAndMaybeReverse(key, i)),
        8,
      )
      expect(killed).toBe(true)
      expect(await first.server.exited).toBe(null)

      // Restart; send again what the crash interrupted (the same keys: replays emit nothing).
      current = await start()
      await pool(
        keys.map((key, i) => allocateAndMaybeReverse(key, i)),
        8,
      )
      const { rows: events } = await sql<{ id: string; type: string }>`SELECT id, type FROM webhook_events`.execute(handle.db)
      expect(events.length).toBeGreaterThanOrEqual(ALLOCATIONS + ALLOCATIONS / REVERSE_EVERY - 2)

      // Wait until every event has a 2xx at both receivers.
      const verified = receivers.map(() => new Map<string, string>())
      const check = () => {
        receivers.forEach((receiver, r) => {
          for (const req of receiver.received) {
            const id = String(req.headers['webhook-id'])
            if (verified[r]!.has(id)) continue
            const answeredOk = req.receivedAt >= failUntil
            if (!answeredOk) continue
            new Webhook(secrets[r]!).verify(req.body, req.headers as Record<string, string>)
            verified[r]!.set(id, req.body)
          }
        })
        return events.every((e) => verified.every((v) => v.has(e.id)))
      }
      const deadline = Date.now() + 150_000
      while (!check()) {
        if (Date.now() > deadline)
          throw new Error(`not delivered: ${events.filter((e) => !verified.every((v) => v.has(e.id))).length} events`)
        await new Promise((r) => setTimeout(r, 250))
      }

      // None lost: every acknowledged allocation and reversal is the data of a delivered event.
      const delivered = new Set<string>()
      for (const body of verified[0]!.values()) {
        const data = JSON.parse(body).data as { fundsAllocationId: string; reversalId?: string }
        delivered.add(data.reversalId ?? data.fundsAllocationId)
      }
      for (const id of acknowledged) expect(delivered.has(id), id).toBe(true)

      // Duplicates only repeat an event: the same webhook-id carries the same body; no event has two ids.
      for (const receiver of receivers) {
        const bodies = new Map<string, Set<string>>()
        for (const req of receiver.received) {
          const id = String(req.headers['webhook-id'])
          bodies.set(id, (bodies.get(id) ?? new Set()).add(req.body))
        }
        for (const set of bodies.values()) expect(set.size).toBe(1)
        const sources = [...bodies.values()].map((set) => {
          const data = JSON.parse([...set][0]!).data as { fundsAllocationId: string; reversalId?: string }
          return data.reversalId ?? data.fundsAllocationId
        })
        expect(new Set(sources).size).toBe(sources.length)
      }
      // Every delivery ends succeeded: the worker records outcomes in batches, just after the receivers saw them.
      const settledBy = Date.now() + 10_000
      let pending = -1
      while (pending !== 0 && Date.now() < settledBy) {
        if (pending > 0) await new Promise((r) => setTimeout(r, 100))
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status <> 'succeeded'`.execute(
          handle.db,
        )
        pending = rows[0]!.n
      }
      expect(pending).toBe(0)
      current.server.child.kill('SIGTERM')
      expect(await current.server.exited).toBe(0)
    },
  )
})
