// npm run bench: starts the baseline and the API (compiled, on a scratch Postgres database), drives each
// scenario with autocannon, and prints req/s, p50, p99, peak RSS and the ratio to the baseline.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import autocannon, { type Request } from 'autocannon'
import pg from 'pg'
import { openPostgres } from '../src/db/connect.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { sampleQuoteBody, scenarios, seed, type Scenario, type Seed } from './scenarios.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const duration = Number(process.env.BENCH_DURATION ?? 10)
const warmup = Number(process.env.BENCH_WARMUP ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 50)
const only = process.env.BENCH_ONLY

const dbUrl = (name: string) => {
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with ${child.exitCode}`)
    try {
      await fetch(url, { method: 'GET' })
      return
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  throw new Error(`${url} did not come up`)
}

function rssSampler(pid: number) {
  let peak = 0
  const sample = () => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8')
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      peak = Math.max(peak, kb)
    } catch {
      /* process gone */
    }
  }
  const timer = setInterval(sample, 100)
  sample()
  return {
    stop: () => {
      clearInterval(timer)
      return peak / 1024
    },
  }
}

interface Result {
  name: string
  target: string
  requestsPerSecond: number
  p50: number
  p99: number
  non2xx: number
  errors: number
  unexpectedStatus: number
  peakRssMb: number
  ratio?: number
  minRatio?: number
  halfRate?: { requestsPerSecond: number; p99: number; maxP99: number }
}

async function drive(scenario: Scenario, baseUrl: string, data: Seed, seconds: number, rate?: number) {
  const body = scenario.body ? JSON.stringify(scenario.body(data)) : undefined
  const headers = { ...(body ? { 'content-type': 'application/json' } : {}), ...(scenario.headers?.(data) ?? {}) }
  let unexpected = 0
  const instance = autocannon({
    url: baseUrl,
    connections,
    duration: seconds,
    ...(rate ? { overallRate: rate } : {}),
    requests: [
      {
        method: scenario.method,
        path: scenario.path(data),
        headers,
        ...(body ? { body } : {}),
        ...(scenario.perRequestHeaders
          ? {
              setupRequest: (request: Request): Request => ({
                ...request,
                headers: { ...request.headers, ...scenario.perRequestHeaders?.() },
              }),
            }
          : {}),
        onResponse: (status: number) => {
          if (status !== scenario.expectStatus) unexpected++
        },
      },
    ],
  })
  const result = await instance
  return { result, unexpected }
}

async function main(): Promise<void> {
  const runId = `${Date.now().toString(36)}`
  const database = `canopy_bench_${runId}`
  await admin(`CREATE DATABASE ${database}`)
  const children: ChildProcess[] = []
  try {
    const handle = openPostgres({ url: dbUrl(database), poolMax: 2 })
    await migrateToLatest(handle.db)
    const seeded = await seed(handle.db)
    await handle.close()

    const basePort = await freePort()
    const baseline = spawn(process.execPath, ['--import', 'tsx', 'bench/baseline.ts'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, BASELINE_DATABASE_URL: dbUrl(database), PORT: String(basePort) },
    })
    children.push(baseline)
    const apiPort = await freePort()
    const api = spawn(process.execPath, ['dist/src/server.js'], {
      cwd: root,
      stdio: 'inherit',
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: dbUrl(database),
        PORT: String(apiPort),
        HOST: '127.0.0.1',
        LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
        RATE_LIMIT_PER_MINUTE: '1000000000',
        DATABASE_POOL_MAX: '10',
      },
    })
    children.push(api)
    const urls = { baseline: `http://127.0.0.1:${basePort}`, api: `http://127.0.0.1:${apiPort}` }
    await waitForHttp(`${urls.baseline}/`, baseline)
    await waitForHttp(`${urls.api}/healthz`, api)
    const pids = { baseline: baseline.pid ?? 0, api: api.pid ?? 0 }
    const quote = await fetch(`${urls.api}/quotes/carbon`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.apiKey}` },
      body: JSON.stringify(sampleQuoteBody(seeded.organisationId)),
    }).then((r) => r.json() as Promise<{ quoteId: string; credits: { amounts: { total: number } } }>)
    const data: Seed = { ...seeded, quoteId: quote.quoteId, creditsTotal: quote.credits.amounts.total }

    const results: Result[] = []
    console.log(
      `\nbench: ${connections} connections, ${warmup}s warm-up + ${duration}s per scenario, API LOG_LEVEL=${process.env.BENCH_LOG_LEVEL ?? 'warn'}\n`,
    )
    for (const scenario of scenarios.filter((s) => !only || s.target === 'baseline' || s.name.includes(only))) {
      if (warmup > 0) await drive(scenario, urls[scenario.target], data, warmup)
      const rss = rssSampler(pids[scenario.target])
      const { result, unexpected } = await drive(scenario, urls[scenario.target], data, duration)
      const row: Result = {
        name: scenario.name,
        target: scenario.target,
        requestsPerSecond: Math.round(result.requests.average),
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
        unexpectedStatus: unexpected,
        peakRssMb: Math.round(rss.stop()),
        ...(scenario.minRatio ? { minRatio: scenario.minRatio } : {}),
      }
      if (scenario.halfRateP99MaxMs !== undefined) {
        const rate = Math.max(1, Math.floor(row.requestsPerSecond / 2))
        const half = await drive(scenario, urls[scenario.target], data, duration, rate)
        row.halfRate = {
          requestsPerSecond: Math.round(half.result.requests.average),
          p99: half.result.latency.p99,
          maxP99: scenario.halfRateP99MaxMs,
        }
        row.unexpectedStatus += half.unexpected
      }
      results.push(row)
      console.log(
        `${row.name}: ${row.requestsPerSecond} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, unexpected ${row.unexpectedStatus}` +
          (row.halfRate ? `; at ${row.halfRate.requestsPerSecond} req/s p99 ${row.halfRate.p99} ms` : ''),
      )
    }
    const base = results.find((r) => r.target === 'baseline')?.requestsPerSecond ?? 0
    for (const row of results) row.ratio = base ? Math.round((row.requestsPerSecond / base) * 100) / 100 : 0

    const header = '| scenario | req/s | p50 ms | p99 ms | peak RSS MB | × baseline | target | unexpected |'
    console.log(`\n${header}\n|---|---:|---:|---:|---:|---:|---:|---:|`)
    for (const r of results) {
      const verdict = r.minRatio === undefined ? '' : `≥ ${r.minRatio} ${r.ratio! >= r.minRatio ? '✓' : '✗'}`
      console.log(
        `| ${r.name} | ${r.requestsPerSecond} | ${r.p50} | ${r.p99} | ${r.peakRssMb} | ${r.ratio} | ${verdict} | ${r.unexpectedStatus} |`,
      )
    }
    for (const r of results.filter((x) => x.halfRate)) {
      const h = r.halfRate!
      console.log(
        `\n${r.name} at half rate (${h.requestsPerSecond} req/s): p99 ${h.p99} ms (target ≤ ${h.maxP99} ms ${h.p99 <= h.maxP99 ? '✓' : '✗'})`,
      )
    }
    const rss = Math.max(...results.filter((r) => r.target === 'api').map((r) => r.peakRssMb))
    console.log(`API peak RSS ${rss} MB (target ≤ 250 MB ${rss <= 250 ? '✓' : '✗'})`)
    writeFileSync(
      `${root}/bench/last-run.json`,
      `${JSON.stringify({ at: new Date().toISOString(), connections, duration, results }, null, 2)}\n`,
    )
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 1000))
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {})
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
