// npm run bench: measures every scenario (bench/scenarios.ts) at each connection count, alternating with
// the baseline (bench/baseline.ts), and the database side of every run; prints markdown tables and
// writes bench/last-run.json. The method is documented in docs/benchmarks.md.
//
// Alternation: at each connection count the runs go B S1 B S2 B … Sn B (B = baseline). Each scenario is
// compared with the mean of the two baseline runs around it, so a slow drift of the machine (other
// processes, a table growing, a checkpoint) weighs on both sides of every ratio, and each baseline run
// serves both its neighbours (n scenarios cost n + 1 baseline runs). Every run has its own warm-up.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { loadBenchConfig, selected, type BenchConfig } from './harness/config.js'
import { DatabaseSide, databaseUrl, migrateAndSeed, withClient, type DatabaseMeter } from './harness/database.js'
import { drive, type ResolvedRequest } from './harness/load.js'
import { cpuSecondsOf, freePort, startApi, startService, stopService, type Service } from './harness/processes.js'
import {
  databaseDetails,
  databaseTable,
  reportJson,
  summaryLines,
  throughputTable,
  type BenchReport,
  type Measurement,
  type ScenarioReport,
} from './harness/report.js'
import { API_PEAK_RSS_MAX_MB, BASELINE_NAME, baselineRequest, groups } from './scenarios.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const config = loadBenchConfig()
const startedAt = Date.now()

const clock = () => {
  const s = Math.round((Date.now() - startedAt) / 1000)
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`
}
const log = (line: string) => console.log(`[${clock()}] ${line}`)
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length)

/** A server under test and the meter of its database. */
interface System {
  service: Service
  meter: DatabaseMeter | undefined
}

const runId = Date.now().toString(36)
const prefix = `canopy_bench_${runId}`
const databases: string[] = []
const services: Service[] = []
let side: DatabaseSide | undefined

async function createDatabase(name: string): Promise<string> {
  await withClient(config.adminUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  databases.push(name)
  return databaseUrl(config.adminUrl, name)
}

async function cleanUp(): Promise<void> {
  await Promise.all(services.splice(0).map((service) => stopService(service)))
  await side?.close().catch(() => {})
  side = undefined
  for (const name of databases.splice(0)) {
    await withClient(config.adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {})
  }
}

/**
 * Warm-up then measurement of one request against one system. `window`: the database side of both is
 * measured (the default); without it the run only marks its database as touched.
 */
async function measure(
  system: System,
  request: ResolvedRequest,
  connections: number,
  label: string,
  options: { overallRate?: number; window?: boolean } = {},
): Promise<Measurement> {
  const { meter, service } = system
  const windowed = options.window ?? true
  const pending = meter ? (windowed ? await meter.beginWindow() : (await meter.beforeTraffic(), undefined)) : undefined
  const rate = options.overallRate ? { overallRate: options.overallRate } : {}
  service.rss.markWindow()
  const warmup = await drive(service.url, request, { connections, seconds: config.warmupSeconds, ...rate })
  const cpuBefore = cpuSecondsOf(service.child.pid)
  const load = await drive(service.url, request, { connections, seconds: config.durationSeconds, ...rate })
  const cpuAfter = cpuSecondsOf(service.child.pid)
  const measurement: Measurement = { connections, load, warmupRequests: warmup.sent, peakRssMb: service.rss.windowPeakMb() }
  if (cpuBefore !== undefined && cpuAfter !== undefined && load.sent > 0) {
    measurement.cpuMicrosPerRequest = ((cpuAfter - cpuBefore) * 1e6) / load.sent
  }
  if (meter) {
    if (pending) {
      pending.onClose = (window) => {
        measurement.database = window
        log(
          `  db ${label} @ ${connections}: ${window.transactionsPerRequest.toFixed(2)} xacts/req, ${window.rowsInsertedPerRequest.toFixed(2)} rows/req, ` +
            `${Math.round(window.wal.bytesPerRequest)} B WAL/req, ${Math.round(window.storedBytesPerRequest)} B stored/req`,
        )
      }
      await meter.endWindow(warmup.sent + load.sent)
    } else meter.touched()
  }
  const odd = load.unexpected ? `, ${load.unexpected} unexpected (${JSON.stringify(load.statuses)})` : ''
  log(
    `${String(connections).padStart(3)} conns  ${label.padEnd(40)} ${String(load.requestsPerSecond).padStart(6)} req/s  ` +
      `p50 ${load.p50} ms  p99 ${load.p99} ms${options.overallRate ? ` (fixed rate ${options.overallRate}/s; autocannon's p99 ${load.autocannonP99} ms)` : ''}${odd}`,
  )
  return measurement
}

async function main(): Promise<void> {
  const plan = groups
    .map((group) => ({ group, scenarios: group.scenarios.filter((s) => selected(config, s.name)) }))
    .filter((p) => p.scenarios.length > 0)
  if (plan.length === 0) throw new Error(`BENCH_ONLY=${config.only.join(',')} selects no scenario`)

  if (config.databaseSide) side = await DatabaseSide.open(await createDatabase(`${prefix}_monitor`), config.sampleIntervalMs, prefix)
  const baselineDatabase = `${prefix}_baseline`
  const baselineUrl = await createDatabase(baselineDatabase)
  const baselinePort = await freePort()
  const baselineService = await startService({
    name: 'baseline',
    cwd: root,
    args: ['--import', 'tsx', 'bench/baseline.ts'],
    env: { ...process.env, BASELINE_DATABASE_URL: baselineUrl, PORT: String(baselinePort), DATABASE_POOL_MAX: '10' },
    port: baselinePort,
    readyPath: '/',
  })
  services.push(baselineService)
  // The baseline creates its table on a connection it closes at once: its database is settled already.
  const baseline: System = { service: baselineService, meter: side?.meter(baselineDatabase, baselineUrl) }

  const withoutAdminUrl = ({ adminUrl: _adminUrl, ...rest }: BenchConfig) => rest
  const report: BenchReport = {
    at: new Date().toISOString(),
    totalSeconds: 0,
    config: { ...withoutAdminUrl(config), node: process.version },
    ...(side ? { postgres: { settings: side.settings, walinspect: side.walinspect, walSlot: side.walSlot } } : {}),
    baseline: { name: BASELINE_NAME, byConnections: {} },
    scenarios: [],
    groups: [],
    rssMaxMb: API_PEAK_RSS_MAX_MB,
    checks: [],
  }
  const pgSettings = side
    ? `; ${side.settings.version.split(' on ')[0]} (fsync=${side.settings.fsync}, synchronous_commit=${side.settings.synchronous_commit}, ` +
      `full_page_writes=${side.settings.full_page_writes}, shared_buffers=${side.settings.shared_buffers})`
    : ''
  console.log(
    `\nbench: ${config.connections.join(', ')} connections (reference ${config.referenceConnections}); ` +
      `${config.warmupSeconds} s warm-up + ${config.durationSeconds} s per run; runs alternate B S B … S B with the baseline\n` +
      `API LOG_LEVEL=${config.logLevel}, DATABASE_POOL_MAX=10; ${config.cpus} CPUs; Node ${process.version}${pgSettings}\n` +
      (config.databaseSide ? '' : 'database side off (BENCH_DB_SIDE=0)\n'),
  )

  for (const { group, scenarios } of plan) {
    const name = `${prefix}_${group.name}`
    const url = await createDatabase(name)
    await migrateAndSeed(url, (db) => group.seed(db))
    const service = await startApi({ name: `api (${group.name})`, cwd: root, databaseUrl: url, logLevel: config.logLevel, env: group.env })
    services.push(service)
    const api: System = { service, meter: side?.meter(name, url) }
    const requests = await group.prepare(service.url)
    api.meter?.touched()
    log(`group ${group.name}: API pid ${service.child.pid}${Object.keys(group.env).length ? `, env ${JSON.stringify(group.env)}` : ''}`)

    const reports = new Map<string, ScenarioReport>()
    for (const s of scenarios) {
      const entry: ScenarioReport = {
        name: s.name,
        group: group.name,
        ...(s.target ? { target: s.target } : {}),
        ...(s.comparedWith ? { comparedWith: s.comparedWith } : {}),
        byConnections: {},
      }
      reports.set(s.name, entry)
      report.scenarios.push(entry)
    }
    const requestOf = (scenario: string): ResolvedRequest => {
      const request = requests.get(scenario)
      if (!request) throw new Error(`group ${group.name} resolved no request for ${scenario}`)
      return request
    }

    for (const connections of config.connections) {
      const runs: Measurement[] = [await measure(baseline, baselineRequest, connections, BASELINE_NAME)]
      for (const s of scenarios) {
        const measurement = await measure(api, requestOf(s.name), connections, s.name)
        const before = runs.at(-1) as Measurement
        const after = await measure(baseline, baselineRequest, connections, BASELINE_NAME)
        runs.push(after)
        const pair: [number, number] = [before.load.requestsPerSecond, after.load.requestsPerSecond]
        const ratio = measurement.load.requestsPerSecond / Math.max(1, mean(pair))
        ;(reports.get(s.name) as ScenarioReport).byConnections[connections] = { measurement, baselineRequestsPerSecond: pair, ratio }
        log(`  ${s.name} @ ${connections}: × ${ratio.toFixed(2)} (baseline ${pair[0]} before, ${pair[1]} after)`)
      }
      ;(report.baseline.byConnections[connections] ??= []).push(...runs)

      if (connections !== config.referenceConnections) continue
      for (const s of scenarios.filter((x) => x.halfRateP99MaxMs !== undefined)) {
        const entry = reports.get(s.name) as ScenarioReport
        const measured = entry.byConnections[connections]?.measurement.load.requestsPerSecond ?? 0
        const overallRate = Math.max(1, Math.floor(measured / 2))
        const half = await measure(api, requestOf(s.name), connections, `${s.name} (half rate)`, { overallRate, window: false })
        const maxP99Ms = s.halfRateP99MaxMs as number
        entry.halfRate = {
          connections,
          overallRate,
          load: half.load,
          maxP99Ms,
          pass: half.load.p99 <= maxP99Ms && half.load.unexpected === 0,
        }
      }
    }
    report.groups.push({ name: group.name, env: group.env, apiPeakRssMb: service.rss.peakMb() })
    await stopService(service)
    services.splice(services.indexOf(service), 1)
    // Its backends publish their counters as they exit: the group's last window closes without a pause.
    await api.meter?.serverStopped()
    await api.meter?.finish()
  }
  await stopService(baselineService)
  services.splice(services.indexOf(baselineService), 1)
  await baseline.meter?.serverStopped()
  await baseline.meter?.finish()

  for (const s of report.scenarios) {
    const ratios = Object.values(s.byConnections).map((x) => x.ratio)
    if (ratios.length) s.worstRatio = Math.min(...ratios)
    if (s.target && s.worstRatio !== undefined) {
      report.checks.push({
        check: `${s.name}: worst × baseline ${s.worstRatio.toFixed(2)} ≥ ${s.target.minRatio}`,
        pass: s.worstRatio >= s.target.minRatio,
      })
    }
    if (s.halfRate) {
      const h = s.halfRate
      report.checks.push({
        check: `${s.name} at half its max rate (${h.connections} connections, fixed ${h.overallRate} req/s, got ${h.load.requestsPerSecond}): p99 ${h.load.p99} ms ≤ ${h.maxP99Ms} ms`,
        pass: h.pass,
      })
    }
  }
  for (const s of report.scenarios) {
    const comparison = s.comparedWith
    const other = comparison && report.scenarios.find((x) => x.name === comparison.scenario)
    if (!comparison || !other) continue
    const counts = Object.keys(s.byConnections).filter((c) => other.byConnections[Number(c)])
    const ratios = counts.map((c) => (s.byConnections[Number(c)]?.ratio ?? 0) / (other.byConnections[Number(c)]?.ratio ?? 1))
    if (!ratios.length) continue
    const worst = Math.min(...ratios)
    report.checks.push({
      check: `${comparison.label} (${s.name} ÷ ${other.name}) at ${counts.join(' / ')} connections: ${ratios.map((r) => r.toFixed(2)).join(' / ')}, worst ${worst.toFixed(2)} ≥ ${comparison.minRatio}`,
      pass: worst >= comparison.minRatio,
    })
  }
  for (const g of report.groups) {
    report.checks.push({
      check: `API (${g.name}) peak RSS over the whole bench ${g.apiPeakRssMb} MB ≤ ${API_PEAK_RSS_MAX_MB} MB`,
      pass: g.apiPeakRssMb <= API_PEAK_RSS_MAX_MB,
    })
  }
  const all = [
    ...Object.values(report.baseline.byConnections).flat(),
    ...report.scenarios.flatMap((s) => Object.values(s.byConnections).map((x) => x.measurement)),
  ]
  const unexpected = all.reduce((sum, m) => sum + m.load.unexpected, 0)
  report.checks.push({ check: `every response had its expected status (${unexpected} did not)`, pass: unexpected === 0 })
  const baseWindows = all.filter((m) => m.database && report.baseline.byConnections[m.connections]?.includes(m)).map((m) => m.database)
  if (baseWindows.length) {
    // The baseline does exactly one INSERT (one transaction, one row) per request: a check of the accounting.
    const xacts = mean(baseWindows.map((w) => w?.transactionsPerRequest ?? 0))
    const rows = mean(baseWindows.map((w) => w?.rowsInsertedPerRequest ?? 0))
    report.checks.push({
      check: `database accounting: the baseline shows ${xacts.toFixed(3)} transactions and ${rows.toFixed(3)} rows per request (1 expected, ± 2%)`,
      pass: Math.abs(xacts - 1) <= 0.02 && Math.abs(rows - 1) <= 0.02,
    })
  }

  report.totalSeconds = Math.round((Date.now() - startedAt) / 1000)
  writeFileSync(`${root}/bench/last-run.json`, reportJson(report))

  const ref = config.referenceConnections
  console.log(`\n## Throughput and latency\n`)
  console.log(
    `× baseline = the scenario's req/s ÷ the mean of the baseline runs just before and after it, at the same connection count; ` +
      `worst × = the lowest over ${config.connections.join(', ')} connections.\n`,
  )
  console.log(throughputTable(report))
  if (side) {
    console.log(`\n## Database side\n`)
    console.log(
      `Per HTTP request sent, over warm-up + measurement. xacts/req at every count, the rest at ${ref} connections. ` +
        `† = a checkpoint completed during the run (more full-page images).\n`,
    )
    console.log(databaseTable(report))
    console.log(`\nWAL by relation and statements sampled from pg_stat_activity, at ${ref} connections:\n`)
    console.log(databaseDetails(report))
  }
  console.log(`\n## Checks\n`)
  for (const line of summaryLines(report)) console.log(line)
  const minutes = Math.floor(report.totalSeconds / 60)
  console.log(`\nTotal ${minutes} min ${report.totalSeconds % 60} s; results in bench/last-run.json`)
}

process.once('SIGINT', () => {
  console.error('\nbench: interrupted, cleaning up')
  void cleanUp().finally(() => process.exit(130))
})

main()
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cleanUp())
