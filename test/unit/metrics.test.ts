// The metrics module on its own: a slow scrape-time source never hangs a scrape, and the scrape listener serves
// GET /metrics and nothing else.
import { afterEach, describe, expect, it } from 'vitest'
import { listenForScrapes, MetricsListenError, PrometheusMetrics, type ScrapeListener } from '../../src/metrics.js'

let listener: ScrapeListener | undefined
afterEach(async () => {
  await listener?.close()
  listener = undefined
})

describe('PrometheusMetrics', () => {
  it('answers a scrape when a source hangs, counting the timeout, and asks a hanging source only once at a time', async () => {
    const metrics = new PrometheusMetrics({ sourceTimeoutMs: 50 })
    let calls = 0
    metrics.setSources({
      outboxes: () => {
        calls++
        return new Promise(() => {})
      },
    })
    const started = Date.now()
    await Promise.all([metrics.scrape(), metrics.scrape()])
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(calls).toBe(1)
    // Counted during those scrapes (two gauges × two scrapes), so visible from the next one.
    expect(await metrics.scrape()).toMatch(/^canopy_metrics_source_errors_total\{source="outbox"\} 4$/m)
  })

  it('counts a failing source and keeps serving the others', async () => {
    const metrics = new PrometheusMetrics({ now: () => Date.parse('2026-11-23T12:00:00Z') })
    metrics.setSources({
      outboxes: () => Promise.reject(new Error('database is down')),
      fxRates: async () => ({ date: '2026-11-20', origin: 'stored' }),
    })
    await metrics.scrape()
    const text = await metrics.scrape()
    expect(text).toMatch(/^canopy_metrics_source_errors_total\{source="outbox"\} 2$/m)
    expect(text).toMatch(/^canopy_fx_rates_age_seconds 302400$/m) // 3.5 days
    expect(text).toMatch(/^canopy_fx_rates_info\{date="2026-11-20",origin="stored"\} 1$/m)
  })
})

describe('listenForScrapes', () => {
  it('serves GET /metrics in the Prometheus text format, and 404 for anything else', async () => {
    const metrics = new PrometheusMetrics()
    metrics.observeRequest('GET', '/quotes/:id', 200, 0.004)
    listener = await listenForScrapes(metrics, { host: '127.0.0.1', port: 0 })
    expect(listener.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    const res = await fetch(listener.url)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    const text = await res.text()
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/quotes/:id",status_class="2xx"} 1')
    for (const path of ['/', '/metrics/x', '/healthz']) expect((await fetch(listener.url.replace('/metrics', path))).status).toBe(404)
    expect((await fetch(listener.url, { method: 'POST' })).status).toBe(404)
  })

  it('refuses to start on a port in use, naming METRICS_PORT', async () => {
    listener = await listenForScrapes(new PrometheusMetrics(), { host: '127.0.0.1', port: 0 })
    const port = Number(new URL(listener.url).port)
    await expect(listenForScrapes(new PrometheusMetrics(), { host: '127.0.0.1', port })).rejects.toThrow(MetricsListenError)
    await expect(listenForScrapes(new PrometheusMetrics(), { host: '127.0.0.1', port })).rejects.toThrow(/METRICS_PORT/)
  })
})
