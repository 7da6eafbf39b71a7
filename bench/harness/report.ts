// What a bench run produced, and how it is printed (markdown tables) and saved (bench/last-run.json).
import type { Comparison, Target } from '../scenarios.js'
import type { BenchConfig } from './config.js'
import type { DatabaseWindow, ServerSettings } from './database.js'
import type { LoadResult } from './load.js'

export interface Measurement {
  connections: number
  /** The measured run (after its warm-up). */
  load: LoadResult
  warmupRequests: number
  /** Peak RSS of the process under test during warm-up and measurement. */
  peakRssMb: number
  /** CPU time of the process under test (the API or the baseline, not Postgres) per request of the measured run. */
  cpuMicrosPerRequest?: number
  /** Database side of warm-up + measurement (absent with BENCH_DB_SIDE=0). */
  database?: DatabaseWindow
}

export interface ScenarioAtCount {
  measurement: Measurement
  /** The baseline runs just before and just after it. */
  baselineRequestsPerSecond: [number, number]
  /** Its req/s ÷ the mean of those two. */
  ratio: number
}

export interface ScenarioReport {
  name: string
  group: string
  target?: Target
  comparedWith?: Comparison
  byConnections: Record<number, ScenarioAtCount>
  worstRatio?: number
  halfRate?: {
    connections: number
    overallRate: number
    load: LoadResult
    maxP99Ms: number
    pass: boolean
  }
}

export interface GroupReport {
  name: string
  env: Record<string, string>
  apiPeakRssMb: number
}

export interface BenchReport {
  at: string
  totalSeconds: number
  /** The bench's settings (all but the admin URL, which may carry a password) and the Node version. */
  config: Omit<BenchConfig, 'adminUrl'> & { node: string }
  postgres?: { settings: ServerSettings; walinspect: boolean; walSlot: boolean }
  baseline: { name: string; byConnections: Record<number, Measurement[]> }
  scenarios: ScenarioReport[]
  groups: GroupReport[]
  rssMaxMb: number
  checks: { check: string; pass: boolean }[]
}

const round = (value: number, digits = 0) => {
  const f = 10 ** digits
  return Math.round(value * f) / f
}
const ms = (value: number | null | undefined) =>
  value === null || value === undefined ? '–' : value < 1 ? value.toFixed(2) : value < 10 ? value.toFixed(1) : String(round(value))
/** autocannon's latencies are whole milliseconds; a mean of several runs gets one decimal. */
const latency = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1))
const pct = (share: number | null | undefined) => (share === null || share === undefined ? '–' : `${round(share * 100)}%`)
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0)
const cpu = (micros: number) => (Number.isFinite(micros) ? String(round(micros)) : '–')
const perCount = (counts: number[], value: (n: number) => string) => counts.map(value).join(' / ')

const ratioVerdict = (worst: number | undefined, target: Target | undefined): string => {
  if (!target || worst === undefined) return ''
  const main = `≥ ${target.minRatio.toFixed(2)} ${worst >= target.minRatio ? '✓' : '✗'}`
  return target.stretchRatio === undefined
    ? main
    : `${main} (stretch ${target.stretchRatio.toFixed(2)} ${worst >= target.stretchRatio ? '✓' : '✗'})`
}

/** The throughput and latency table. */
export function throughputTable(report: BenchReport): string {
  const counts = report.config.connections
  const at = counts.join(' / ')
  const lines = [
    `| scenario | req/s @ ${at} | p50 ms | p99 ms | process CPU µs/req | × baseline | worst × | target | peak RSS MB | unexpected |`,
    '|---|---|---|---|---|---|---:|---|---:|---:|',
  ]
  const base = report.baseline.byConnections
  const baseRuns = (n: number) => base[n] ?? []
  const spread = (n: number) => {
    const rates = baseRuns(n).map((m) => m.load.requestsPerSecond)
    if (rates.length < 2) return '–'
    return `±${round(((Math.max(...rates) - Math.min(...rates)) / 2 / mean(rates)) * 100)}%`
  }
  lines.push(
    `| ${report.baseline.name} (mean of ${perCount(counts, (n) => String(baseRuns(n).length))} runs) | ` +
      `${perCount(counts, (n) => String(round(mean(baseRuns(n).map((m) => m.load.requestsPerSecond)))))} | ` +
      `${perCount(counts, (n) => latency(round(mean(baseRuns(n).map((m) => m.load.p50)), 1)))} | ` +
      `${perCount(counts, (n) => latency(round(mean(baseRuns(n).map((m) => m.load.p99)), 1)))} | ` +
      `${perCount(counts, (n) => cpu(mean(baseRuns(n).map((m) => m.cpuMicrosPerRequest ?? NaN))))} | 1 | | runs spread ${perCount(counts, spread)} | ` +
      `${Math.max(0, ...counts.flatMap((n) => baseRuns(n).map((m) => m.peakRssMb)))} | ` +
      `${counts.reduce((sum, n) => sum + baseRuns(n).reduce((s, m) => s + m.load.unexpected, 0), 0)} |`,
  )
  for (const s of report.scenarios) {
    const at = (n: number) => s.byConnections[n]
    const cell = (value: (x: ScenarioAtCount) => string) => perCount(counts, (n) => (at(n) ? value(at(n) as ScenarioAtCount) : '–'))
    lines.push(
      `| ${s.name} | ${cell((x) => String(x.measurement.load.requestsPerSecond))} | ${cell((x) => latency(x.measurement.load.p50))} | ` +
        `${cell((x) => latency(x.measurement.load.p99))} | ${cell((x) => cpu(x.measurement.cpuMicrosPerRequest ?? NaN))} | ` +
        `${cell((x) => x.ratio.toFixed(2))} | ` +
        `${s.worstRatio === undefined ? '–' : s.worstRatio.toFixed(2)} | ${ratioVerdict(s.worstRatio, s.target)} | ` +
        `${Math.max(0, ...Object.values(s.byConnections).map((x) => x.measurement.peakRssMb))} | ` +
        `${Object.values(s.byConnections).reduce((sum, x) => sum + x.measurement.load.unexpected, 0)} |`,
    )
  }
  return lines.join('\n')
}

const bytes = (value: number) => (value >= 10_000 ? `${round(value / 1000, 1)} k` : String(round(value)))
const num = (value: number) => (value >= 100 ? String(round(value)) : value >= 10 ? value.toFixed(1) : value.toFixed(2))

/** The database-side table: transactions per request at every count, the rest at the reference count. */
export function databaseTable(report: BenchReport): string {
  const counts = report.config.connections
  const ref = report.config.referenceConnections
  const rows: { name: string; windows: Record<number, DatabaseWindow | undefined> }[] = [
    {
      name: report.baseline.name,
      // Every baseline run at a count does the same work; the first one's window stands for them.
      windows: Object.fromEntries(counts.map((n) => [n, report.baseline.byConnections[n]?.find((m) => m.database)?.database])),
    },
    ...report.scenarios.map((s) => ({
      name: s.name,
      windows: Object.fromEntries(counts.map((n) => [n, s.byConnections[n]?.measurement.database])),
    })),
  ]
  const scope = report.postgres?.walinspect ? 'this database' : 'whole cluster'
  const lines = [
    `| scenario | xacts/req @ ${counts.join(' / ')} | rows ins/req | WAL B/req (${scope}) | FPI | stored B/req | buffers/req | DB ms/xact | busy / open conns | top waits |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ]
  for (const row of rows) {
    const w = row.windows[ref]
    const xacts = perCount(counts, (n) => (row.windows[n] ? row.windows[n].transactionsPerRequest.toFixed(2) : '–'))
    if (!w) {
      lines.push(`| ${row.name} | ${xacts} | | | | | | | | |`)
      continue
    }
    const waits = w.activity.waits
      .slice(0, 2)
      .map((x) => `${x.event} ${pct(x.share)}`)
      .join(', ')
    lines.push(
      `| ${row.name} | ${xacts} | ${num(w.rowsInsertedPerRequest)} | ` +
        `${bytes(w.wal.bytesPerRequest)}${w.wal.scope === 'cluster' && report.postgres?.walinspect ? ' (cluster)' : ''}${w.wal.checkpoints ? ' †' : ''} | ` +
        `${pct(w.wal.fpiShare)} | ${bytes(w.storedBytesPerRequest)} | ${num(w.buffersPerRequest)} | ${ms(w.activity.dbMsPerTransaction)} | ` +
        `${w.activity.busyBackends.toFixed(1)} / ${w.activity.openBackends.toFixed(1)} | ${waits || '–'} |`,
    )
  }
  return lines.join('\n')
}

/** Per scenario at the reference count: where its WAL goes and which statements keep the database busy. */
export function databaseDetails(report: BenchReport): string {
  const ref = report.config.referenceConnections
  const entries: [string, DatabaseWindow | undefined][] = [
    [report.baseline.name, report.baseline.byConnections[ref]?.find((m) => m.database)?.database],
    ...report.scenarios.map((s): [string, DatabaseWindow | undefined] => [s.name, s.byConnections[ref]?.measurement.database]),
  ]
  const out: string[] = []
  for (const [name, w] of entries) {
    if (!w) continue
    const wal = w.wal.byRelation
      .filter((r) => r.bytesPerRequest >= 1)
      .slice(0, 5)
      .map((r) => `${r.relation} ${bytes(r.bytesPerRequest)} B (FPI ${pct(r.fpiShare)})`)
      .join(', ')
    const statements = w.activity.statements
      .filter((s) => s.shareOfBusy >= 0.02 || s.completedSampled >= 5)
      .slice(0, 4)
      .map(
        (s) =>
          `  - ${pct(s.shareOfBusy)} of busy samples, p50 ${ms(s.p50Ms)} ms, p95 ${ms(s.p95Ms)} ms (${s.completedSampled} sampled)` +
          (s.meanRows !== null ? `, ${s.rowsLowerBound ? '≥ ' : ''}${s.meanRows.toFixed(1)} rows/statement` : '') +
          `: \`${s.statement}\``,
      )
    out.push(`- **${name}**: WAL per request ${wal || 'none'}`)
    out.push(...statements)
  }
  return out.join('\n')
}

/** bench/last-run.json: fractions kept to 4 significant digits. */
export const reportJson = (report: BenchReport): string =>
  `${JSON.stringify(report, (_key, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value), 2)}\n`

export function summaryLines(report: BenchReport): string[] {
  return report.checks.map((c) => `${c.pass ? '✓' : '✗'} ${c.check}`)
}
