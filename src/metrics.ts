// Prometheus metrics (prom-client): the one module that knows about them. Services report through the small
// `Metrics` interface in their deps (a no-op when metrics are off); gauges that describe shared state (the
// outbox, the pool, the exchange rates in use) are read at scrape time from `MetricSources`. Served on its own
// listener (METRICS_HOST:METRICS_PORT), never on the public port. No label ever carries a secret or a raw URL.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/** What services report. Labels are bounded: currencies the FX table prices, impact types, origins, kinds. */
export interface Metrics {
  quoteCreated(impactType: string, origin: string): void
  sessionCreated(kind: string): void
  allocationCreated(currency: string): void
  allocationReplayed(currency: string): void
  allocationReversed(currency: string): void
  /** One webhook attempt, by what came of it: succeeded, failed (a non-2xx answer), gone (410) or error (no answer). */
  webhookAttempt(outcome: string): void
  /** A round of the summary rollup worker failed (it is tried again; summaries read the records meanwhile). */
  summaryRollupFailed(): void
  /** A partition maintenance run failed (tried again at the next interval; default partitions take new rows). */
  partitionMaintenanceFailed(): void
  /** A partition maintenance run completed at `at`. */
  partitionMaintenanceSucceeded(at: Date): void
}

export const noMetrics: Metrics = {
  quoteCreated: () => {},
  sessionCreated: () => {},
  allocationCreated: () => {},
  allocationReplayed: () => {},
  allocationReversed: () => {},
  webhookAttempt: () => {},
  summaryRollupFailed: () => {},
  partitionMaintenanceFailed: () => {},
  partitionMaintenanceSucceeded: () => {},
}

export interface PoolStats {
  total: number
  idle: number
  waiting: number
  max: number
}

export interface OutboxStats {
  pending: number
  oldestPendingAt: Date | null
}

/** Read at scrape time; each is optional (the embedded database has no pool). */
export interface MetricSources {
  pool?: () => PoolStats
  /** Pending work per outbox (tax_receipts today), by a cheap query. */
  outboxes?: () => Promise<Record<string, OutboxStats>>
  /** The date of the exchange rates new quotes use, and where they come from. */
  fxRates?: () => Promise<{ date: string; origin: 'stored' | 'embedded' }>
  /** Up to when the summary rollups are complete (null: nothing rolled up yet). */
  summaryRollups?: () => Promise<{ rolledUntil: Date | null }>
  /** DATABASE_REPLICA_URL only: whether reads go to the replica now, and its replay lag last measured. */
  replica?: () => ReplicaGauges
}

export interface ReplicaGauges {
  inUse: boolean
  lagMs: number | null
}

export interface PrometheusMetricsOptions {
  /** Wall clock in ms (ages are measured against it). */
  now?: () => number
  /** A scrape-time source slower than this is skipped for this scrape (and counted). */
  sourceTimeoutMs?: number
}

const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const STATUS_CLASSES = ['0xx', '1xx', '2xx', '3xx', '4xx', '5xx']

/** Label value of requests that matched no route: their URLs never become labels. */
export const UNMATCHED_ROUTE = 'unmatched'

export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry()
  private sources: MetricSources = {}
  private readonly now: () => number
  private readonly sourceTimeoutMs: number
  private readonly requestDuration: Histogram<'method' | 'route' | 'status_class'>
  private readonly quotes: Counter<'impact_type' | 'origin'>
  private readonly sessions: Counter<'kind'>
  private readonly allocations: Counter<'currency'>
  private readonly replays: Counter<'currency'>
  private readonly reversals: Counter<'currency'>
  private readonly webhookAttempts: Counter<'outcome'>
  private readonly rateLimitErrors: Counter
  private readonly replicaSkips: Counter<'reason'>
  private readonly sourceErrors: Counter<'source'>
  private readonly rollupFailures: Counter
  private readonly partitionFailures: Counter
  private readonly partitionSuccess: Gauge
  private readonly inFlight = new Map<string, Promise<unknown>>()

  constructor(options: PrometheusMetricsOptions = {}) {
    this.now = options.now ?? Date.now
    this.sourceTimeoutMs = options.sourceTimeoutMs ?? 1000
    const registers = [this.registry]
    collectDefaultMetrics({ register: this.registry })

    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by route pattern (unmatched for 404s without a route) and status class',
      labelNames: ['method', 'route', 'status_class'],
      buckets: REQUEST_BUCKETS,
      registers,
    })
    this.quotes = new Counter({
      name: 'canopy_quotes_created_total',
      help: 'Quotes created, by impact type and origin (quote, post-purchase-session, checkout-session)',
      labelNames: ['impact_type', 'origin'],
      registers,
    })
    this.sessions = new Counter({
      name: 'canopy_sessions_created_total',
      help: 'Post-purchase and checkout sessions created',
      labelNames: ['kind'],
      registers,
    })
    this.allocations = new Counter({
      name: 'canopy_allocations_created_total',
      help: 'Funds allocations created (not replays), by currency',
      labelNames: ['currency'],
      registers,
    })
    this.replays = new Counter({
      name: 'canopy_allocations_replayed_total',
      help: 'Funds allocation requests answered from an earlier request with the same Idempotency-Key, by currency',
      labelNames: ['currency'],
      registers,
    })
    this.webhookAttempts = new Counter({
      name: 'canopy_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome: succeeded (2xx), failed (another status), gone (410: endpoint disabled), error (no answer)',
      labelNames: ['outcome'],
      registers,
    })
    this.reversals = new Counter({
      name: 'canopy_allocations_reversed_total',
      help: 'Funds allocations reversed, by currency',
      labelNames: ['currency'],
      registers,
    })
    this.rateLimitErrors = new Counter({
      name: 'canopy_rate_limit_store_errors_total',
      help: 'Rate-limit checks that failed because the shared store (Redis) did not answer; those requests were served (fail open)',
      registers,
    })
    this.replicaSkips = new Counter({
      name: 'canopy_db_replica_skips_total',
      help: 'Times the read replica was taken out of use (reads then go to the primary), by reason: unavailable, lagging, not-receiving, not-standby',
      labelNames: ['reason'],
      registers,
    })
    this.sourceErrors = new Counter({
      name: 'canopy_metrics_source_errors_total',
      help: 'Scrape-time reads that failed or took longer than the timeout (their gauges keep their previous values)',
      labelNames: ['source'],
      registers,
    })

    this.partitionFailures = new Counter({
      name: 'canopy_partition_maintenance_failures_total',
      help: 'Partition maintenance runs that failed (tried again at the next interval; serving goes on)',
      registers,
    })
    this.partitionSuccess = new Gauge({
      name: 'canopy_partition_maintenance_last_success_seconds',
      help: 'When partition maintenance last completed (Unix time); alert when it is over a day old',
      registers,
    })

    this.rollupFailures = new Counter({
      name: 'canopy_summary_rollup_failures_total',
      help: 'Rounds of the summary rollup worker that failed (retried; summaries stay exact and read the records meanwhile)',
      registers,
    })

    const sources = () => this.sources
    const read = <T>(name: string, load: () => Promise<T>) => this.read(name, load)

    const now = this.now
    const outboxes = () => {
      const load = sources().outboxes
      return load ? read('outbox', load) : Promise.resolve(undefined)
    }
    new Gauge({
      name: 'canopy_outbox_pending',
      help: 'Messages waiting in an outbox (tax_receipts: receipts not yet sent or given up; webhook_deliveries: deliveries not yet succeeded or failed)',
      labelNames: ['outbox'],
      registers,
      async collect() {
        for (const [outbox, stats] of Object.entries((await outboxes()) ?? {})) this.set({ outbox }, stats.pending)
      },
    })
    new Gauge({
      name: 'canopy_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest message waiting in an outbox (0 when none waits)',
      labelNames: ['outbox'],
      registers,
      async collect() {
        for (const [outbox, stats] of Object.entries((await outboxes()) ?? {})) {
          this.set({ outbox }, stats.oldestPendingAt ? Math.max(0, (now() - stats.oldestPendingAt.getTime()) / 1000) : 0)
        }
      },
    })

    const fxRates = () => {
      const load = sources().fxRates
      return load ? read('fx_rates', load) : Promise.resolve(undefined)
    }
    new Gauge({
      name: 'canopy_fx_rates_age_seconds',
      help: 'Age of the exchange rates new quotes use (since 00:00 UTC of their date)',
      registers,
      async collect() {
        const rates = await fxRates()
        if (rates) this.set(Math.max(0, (now() - Date.parse(`${rates.date}T00:00:00Z`)) / 1000))
      },
    })
    new Gauge({
      name: 'canopy_fx_rates_info',
      help: 'The exchange rates new quotes use: their date, and origin (stored = imported with fx import; embedded = compiled in)',
      labelNames: ['date', 'origin'],
      registers,
      async collect() {
        const rates = await fxRates()
        if (!rates) return
        this.reset()
        this.set({ date: rates.date, origin: rates.origin }, 1)
      },
    })

    const summaryRollups = () => {
      const load = sources().summaryRollups
      return load ? read('summary_rollups', load) : Promise.resolve(undefined)
    }
    new Gauge({
      name: 'canopy_summary_rollup_lag_seconds',
      help: 'How far behind now the summary rollups are complete (rolled_until); the last SUMMARY_ROLLUP_DELAY_SECONDS are never rolled up',
      registers,
      async collect() {
        const state = await summaryRollups()
        if (state?.rolledUntil) this.set(Math.max(0, (now() - state.rolledUntil.getTime()) / 1000))
      },
    })
  }

  summaryRollupFailed(): void {
    this.rollupFailures.inc()
  }

  partitionMaintenanceFailed(): void {
    this.partitionFailures.inc()
  }

  partitionMaintenanceSucceeded(at: Date): void {
    this.partitionSuccess.set(at.getTime() / 1000)
  }

  /** Called once the app has built what the sources read. Pool gauges exist only where there is a pool. */
  setSources(sources: MetricSources): void {
    this.sources = sources
    const replica = sources.replica
    if (replica && !this.registry.getSingleMetric('canopy_db_replica_in_use')) {
      new Gauge({
        name: 'canopy_db_replica_in_use',
        help: 'Whether reads go to the read replica (1) or to the primary because it is skipped or not yet checked (0)',
        registers: [this.registry],
        collect() {
          this.set(replica().inUse ? 1 : 0)
        },
      })
      new Gauge({
        name: 'canopy_db_replica_lag_seconds',
        help: "The read replica's replay lag at its last check (0 when it has replayed all it received; NaN when unknown)",
        registers: [this.registry],
        collect() {
          const { lagMs } = replica()
          this.set(lagMs === null ? NaN : lagMs / 1000)
        },
      })
    }
    const stats = sources.pool
    if (!stats || this.registry.getSingleMetric('canopy_db_pool_clients')) return
    const pool = (name: string, help: string, pick: (stats: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(pick(stats()))
        },
      })
    pool('canopy_db_pool_clients', 'Postgres connections open in this process', (s) => s.total)
    pool('canopy_db_pool_idle_clients', 'Postgres connections open and idle', (s) => s.idle)
    pool('canopy_db_pool_waiting_requests', 'Queries waiting for a pooled Postgres connection', (s) => s.waiting)
    pool('canopy_db_pool_max_clients', 'DATABASE_POOL_MAX: the most connections this process opens', (s) => s.max)
  }

  /** One concurrent read per source, bounded by the timeout; failures are counted, never thrown at the scrape. */
  private async read<T>(name: string, load: () => Promise<T>): Promise<T | undefined> {
    let pending = this.inFlight.get(name) as Promise<T> | undefined
    if (!pending) {
      pending = load().finally(() => this.inFlight.delete(name))
      this.inFlight.set(name, pending)
    }
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.sourceTimeoutMs)
    })
    try {
      const result = await Promise.race([pending, timeout])
      if (result === 'timeout') {
        this.sourceErrors.inc({ source: name })
        return undefined
      }
      return result
    } catch {
      this.sourceErrors.inc({ source: name })
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }

  /** Per request (an onResponse hook): `route` is the route pattern, or UNMATCHED_ROUTE. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    const statusClass = STATUS_CLASSES[Math.floor(statusCode / 100)] ?? '5xx'
    this.requestDuration.observe({ method, route, status_class: statusClass }, seconds)
  }

  rateLimitStoreFailed(): void {
    this.rateLimitErrors.inc()
  }

  replicaSkipped(reason: string): void {
    this.replicaSkips.inc({ reason })
  }

  quoteCreated(impactType: string, origin: string): void {
    this.quotes.inc({ impact_type: impactType, origin })
  }

  sessionCreated(kind: string): void {
    this.sessions.inc({ kind })
  }

  allocationCreated(currency: string): void {
    this.allocations.inc({ currency })
  }

  allocationReplayed(currency: string): void {
    this.replays.inc({ currency })
  }

  webhookAttempt(outcome: string): void {
    this.webhookAttempts.inc({ outcome })
  }

  allocationReversed(currency: string): void {
    this.reversals.inc({ currency })
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}

export class MetricsListenError extends Error {
  constructor(host: string, port: number, cause: unknown) {
    const reason = (cause as NodeJS.ErrnoException)?.code ?? (cause as Error)?.message
    super(`cannot serve metrics on ${host}:${port} (${reason}); choose another METRICS_PORT, or 0 to turn metrics off`, { cause })
    this.name = 'MetricsListenError'
  }
}

export interface ScrapeListener {
  /** http://host:port/metrics */
  url: string
  close(): Promise<void>
}

/**
 * A bare HTTP listener for Prometheus: GET /metrics and nothing else (404). Separate from the API's port, so
 * metrics are never reachable where the API is published.
 */
export async function listenForScrapes(
  metrics: Pick<PrometheusMetrics, 'scrape' | 'contentType'>,
  options: { host: string; port: number; onError?: (error: unknown) => void },
): Promise<ScrapeListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    metrics.scrape().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text),
      (error: unknown) => {
        options.onError?.(error)
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n')
      },
    )
  })
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    const failed = (error: unknown) => reject(new MetricsListenError(options.host, options.port, error))
    server.once('error', failed)
    server.listen(options.port, options.host, () => {
      server.off('error', failed)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}
