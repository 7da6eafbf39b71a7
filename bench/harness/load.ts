// One autocannon run against a resolved scenario.
import autocannon, { type Request } from 'autocannon'

/** A scenario with its data filled in: what autocannon sends. */
export interface ResolvedRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  path: string
  headers: Record<string, string>
  /** JSON text. */
  body?: string
  /** Called per request: headers that must differ between requests (e.g. a new Idempotency-Key). */
  perRequestHeaders?: () => Record<string, string>
  expectStatus: number
}

export interface LoadResult {
  seconds: number
  /** Requests written to a socket (some of the last ones may be unanswered when the run stops). */
  sent: number
  /** Responses received. */
  completed: number
  requestsPerSecond: number
  p50: number
  p90: number
  p99: number
  max: number
  /**
   * At a fixed rate: autocannon's own p99, whose correction for coordinated omission takes 1 ms as each connection's
   * expected interval whatever the rate (see `correctedP99`); `p99` is then the corrected figure.
   */
  autocannonP99?: number
  /** Responses with another status than expected, plus socket errors (timeouts included). */
  unexpected: number
  statuses: Record<string, number>
}

/**
 * The p99 of response times at a fixed rate, corrected for coordinated omission as HdrHistogram's
 * recordValueWithExpectedInterval does: a response slower than the connection's interval between requests stands
 * also for the requests that interval would have sent meanwhile (value − interval, value − 2·interval, …). autocannon
 * makes the same correction with an interval of `Math.ceil(1 / rate)` — 1 ms for any rate of one request a second or
 * more, since its rate is per second — so a response of 100 ms counts 100 times (docs/benchmarks.md, "The half-rate
 * p99"); here the interval is a connection's own, 1,000 / (its requests per second) ms.
 */
export function correctedP99(responseMs: readonly number[], expectedIntervalMs: number): number {
  const values: number[] = []
  for (const value of responseMs) {
    values.push(value)
    for (let missing = value - expectedIntervalMs; missing >= expectedIntervalMs; missing -= expectedIntervalMs) values.push(missing)
  }
  if (values.length === 0) return 0
  values.sort((a, b) => a - b)
  return Math.round(values[Math.min(values.length - 1, Math.ceil(values.length * 0.99) - 1)] as number)
}

export async function drive(
  url: string,
  request: ResolvedRequest,
  options: { connections: number; seconds: number; overallRate?: number },
): Promise<LoadResult> {
  let unexpected = 0
  const responseMs: number[] = []
  const settings: autocannon.Options = {
    url,
    connections: options.connections,
    duration: options.seconds,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    requests: [
      {
        method: request.method,
        path: request.path,
        headers: { ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}), ...request.headers },
        ...(request.body !== undefined ? { body: request.body } : {}),
        ...(request.perRequestHeaders
          ? {
              setupRequest: (req: Request): Request => ({ ...req, headers: { ...req.headers, ...request.perRequestHeaders?.() } }),
            }
          : {}),
        onResponse: (status: number) => {
          if (status !== request.expectStatus) unexpected++
        },
      },
    ],
  }
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(settings, (error: unknown, done: autocannon.Result) => (error ? reject(error) : resolve(done)))
    // autocannon's histogram holds 2xx latencies only; so do these.
    if (options.overallRate)
      instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) responseMs.push(ms)
      })
  })
  const statuses: Record<string, number> = {}
  for (const [status, { count }] of Object.entries(result.statusCodeStats ?? {})) statuses[status] = count ?? 0
  const seconds = result.duration
  return {
    seconds,
    sent: result.requests.sent,
    completed: result.requests.total,
    requestsPerSecond: seconds > 0 ? Math.round(result.requests.total / seconds) : 0,
    p50: result.latency.p50,
    p90: result.latency.p90,
    // autocannon spreads the rate over the connections: a connection's interval is connections / rate seconds.
    p99: options.overallRate ? correctedP99(responseMs, (1_000 * options.connections) / options.overallRate) : result.latency.p99,
    ...(options.overallRate ? { autocannonP99: result.latency.p99 } : {}),
    max: result.latency.max,
    // autocannon's errors include its timeouts.
    unexpected: unexpected + result.errors,
    statuses,
  }
}
