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
  /** Responses with another status than expected, plus socket errors (timeouts included). */
  unexpected: number
  statuses: Record<string, number>
}

export async function drive(
  url: string,
  request: ResolvedRequest,
  options: { connections: number; seconds: number; overallRate?: number },
): Promise<LoadResult> {
  let unexpected = 0
  const result = await autocannon({
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
    p99: result.latency.p99,
    max: result.latency.max,
    // autocannon's errors include its timeouts.
    unexpected: unexpected + result.errors,
    statuses,
  }
}
