// npm run bench:webhooks — webhooks under allocation load (docs/webhooks.md, "Figures"):
//  - allocation throughput with an enabled endpoint vs with none (the same process and database; the endpoint is
//    enabled or disabled between runs, which alternate without / with / without / with …);
//  - commit → first delivery attempt: for every allocation.created event that reaches the receiver during the
//    "with" runs, arrival time minus the event's timestamp (the allocation's createdAt, taken just before its
//    statement runs, so this slightly overstates the delay), p50 / p95 / max.
// Settings: BENCH_DATABASE_URL (or DATABASE_URL), BENCH_CONNECTIONS (10,20,50), BENCH_WARMUP (s), BENCH_DURATION (s),
// BENCH_ROUNDS (with/without pairs per connection count, 2), BENCH_NODE_ARGS (node flags for the API).
import { randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { loadBenchConfig } from './harness/config.js'
import { databaseUrl, withClient } from './harness/database.js'
import { drive, type ResolvedRequest } from './harness/load.js'
import { startApi, stopService, type Service } from './harness/processes.js'
import { createQuote, seedMerchant } from './scenarios.js'

const config = loadBenchConfig()
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const root = fileURLToPath(new URL('..', import.meta.url))
const name = `canopy_bench_webhooks_${Date.now().toString(36)}`
const log = (line: string) => console.error(`[bench:webhooks] ${line}`)

const quantile = (sorted: number[], q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function main(): Promise<void> {
  await withClient(config.adminUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  const url = databaseUrl(config.adminUrl, name)
  let service: Service | undefined
  const receiver = { delays: [] as number[], recording: false, received: 0 }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const arrived = Date.now()
      receiver.received++
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; timestamp: string }
      if (receiver.recording && event.type === 'allocation.created') receiver.delays.push(arrived - Date.parse(event.timestamp))
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const handle = openPostgres({ url, poolMax: 2 })
  try {
    await migrateToLatest(handle.db)
    const merchant = await seedMerchant(handle.db)
    service = await startApi({
      name: 'api',
      cwd: root,
      databaseUrl: url,
      logLevel: config.logLevel,
      env: { WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8', WEBHOOK_ALLOW_HTTP: 'true' },
    })
    const m = await createQuote(service.url, merchant)
    const auth = { authorization: `Bearer ${m.apiKey}`, 'content-type': 'application/json' }
    const created = await fetch(`${service.url}/v3/webhook-endpoints`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ organisationId: m.organisationId, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` }),
    })
    if (created.status !== 201) throw new Error(`creating the endpoint: ${created.status} ${await created.text()}`)
    const endpointId = ((await created.json()) as { id: string }).id
    const setEndpoint = async (status: 'enabled' | 'disabled') => {
      const res = await fetch(`${service!.url}/v3/webhook-endpoints/${endpointId}`, {
        method: 'PATCH',
        headers: auth,
        body: JSON.stringify({ status }),
      })
      if (res.status !== 200) throw new Error(`PATCH endpoint: ${res.status}`)
    }
    const pending = async () =>
      Number(
        (await sql<{ n: string }>`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`.execute(handle.db)).rows[0]!.n,
      )
    const request: ResolvedRequest = {
      method: 'POST',
      path: '/funds/allocations',
      headers: { authorization: `Bearer ${m.apiKey}` },
      body: JSON.stringify({ organisationId: m.organisationId, quoteId: m.quoteId, credits: { amount: m.creditsTotal } }),
      perRequestHeaders: () => ({ 'idempotency-key': randomUUID() }),
      expectStatus: 201,
    }

    const results: { connections: number; without: number[]; with: number[]; ratio: number; unexpected: number; backlogAfter: number[] }[] =
      []
    for (const connections of config.connections) {
      const row = { connections, without: [] as number[], with: [] as number[], ratio: 0, unexpected: 0, backlogAfter: [] as number[] }
      for (let round = 0; round < rounds; round++) {
        for (const withEndpoint of [false, true]) {
          await setEndpoint(withEndpoint ? 'enabled' : 'disabled')
          await drive(service.url, request, { connections, seconds: config.warmupSeconds })
          receiver.recording = withEndpoint
          const result = await drive(service.url, request, { connections, seconds: config.durationSeconds })
          receiver.recording = false
          row.unexpected += result.unexpected
          ;(withEndpoint ? row.with : row.without).push(result.requestsPerSecond)
          if (withEndpoint) {
            row.backlogAfter.push(await pending())
            // Let the backlog drain before the next run, so runs do not pay for each other's deliveries.
            for (let i = 0; i < 600 && (await pending()) > 0; i++) await new Promise((r) => setTimeout(r, 100))
          }
          log(`${connections} connections, ${withEndpoint ? 'with' : 'without'} endpoint: ${result.requestsPerSecond} req/s`)
        }
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
      row.ratio = Math.round((mean(row.with) / mean(row.without)) * 100) / 100
      results.push(row)
    }
    const delays = [...receiver.delays].sort((a, b) => a - b)
    const latency = {
      events: delays.length,
      p50: quantile(delays, 0.5),
      p95: quantile(delays, 0.95),
      p99: quantile(delays, 0.99),
      max: delays.at(-1) ?? NaN,
    }

    console.log(
      `\nwebhooks bench: ${config.warmupSeconds} s warm-up + ${config.durationSeconds} s per run, ${rounds} rounds of without/with; ${config.cpus} CPUs\n`,
    )
    console.log(
      '| connections | allocations/s without endpoint | with endpoint | with / without | deliveries pending after each with-run |',
    )
    console.log('|---:|---|---|---:|---|')
    for (const r of results)
      console.log(`| ${r.connections} | ${r.without.join(' / ')} | ${r.with.join(' / ')} | ${r.ratio} | ${r.backlogAfter.join(' / ')} |`)
    console.log(
      `\ncommit → first attempt (allocation.created, ${latency.events} events): p50 ${latency.p50} ms, p95 ${latency.p95} ms, p99 ${latency.p99} ms, max ${latency.max} ms`,
    )
    const worst = Math.min(...results.map((r) => r.ratio))
    console.log(`${worst >= 0.9 ? '✓' : '✗'} throughput with an endpoint ≥ 0.9 × without (worst ${worst})`)
    console.log(`${latency.p95 <= 2000 ? '✓' : '✗'} commit → first attempt p95 ≤ 2 s (${latency.p95} ms)`)
    console.log(`${results.every((r) => r.unexpected === 0) ? '✓' : '✗'} every allocation answered 201`)
    writeFileSync(
      new URL('./last-webhooks-run.json', import.meta.url),
      `${JSON.stringify({ config, rounds, results, latency }, null, 2)}\n`,
    )
  } finally {
    if (service) await stopService(service, 20_000)
    await handle.close()
    server.close()
    await withClient(config.adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {})
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
