// Table statistics where autovacuum does not keep them (docs/table-statistics.md): on Postgres, the worker analyses
// the tables autovacuum's analyse rule says are due and autovacuum does not look after — here, tables with autovacuum
// turned off for them, so the test holds whatever the server's own setting — and leaves the others alone; the current
// month's allocations partition, analysed empty by the migrations, is analysed once allocations fill it. On the
// embedded database there is no worker.
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { client, createTestApp, type TestApp } from '../helpers/app.js'
import { onPostgres } from '../helpers/db.js'
import { createOrg, floristQuote, importDemoCatalogue } from '../helpers/factories.js'
import { until } from '../helpers/wait.js'

describe.runIf(onPostgres())('the table statistics worker (Postgres)', () => {
  let t: TestApp
  let probe: pg.Client

  const estimatedRows = async (table: string) =>
    Number((await sql<{ n: number }>`SELECT reltuples::float8 AS n FROM pg_class WHERE relname = ${table}`.execute(t.db)).rows[0]?.n)

  beforeAll(async () => {
    t = await createTestApp({ TABLE_STATISTICS_WORKER: 'true', TABLE_STATISTICS_INTERVAL_MS: '100' })
    probe = new pg.Client({ connectionString: t.database.url })
    await probe.connect()
  })

  afterAll(async () => {
    await probe?.end()
    await t?.close()
  })

  it('analyses a table changed by more rows than the threshold, and only such tables', async () => {
    await probe.query(`
      CREATE TABLE stats_probe_due (n int) WITH (autovacuum_enabled = false);
      CREATE TABLE stats_probe_few (n int) WITH (autovacuum_enabled = false);
      INSERT INTO stats_probe_due SELECT generate_series(1, 200);
      INSERT INTO stats_probe_few SELECT generate_series(1, 10)`)
    // This connection's counts reach the shared statistics at its next report, which this forces.
    await probe.query('SELECT pg_stat_force_next_flush()')
    await probe.query('SELECT 1')
    expect(
      await until(
        () => estimatedRows('stats_probe_due'),
        (n) => n === 200,
        20_000,
      ),
    ).toBe(200)
    // 10 rows are under the threshold (50): never analysed.
    expect(await estimatedRows('stats_probe_few')).toBe(-1)
  })

  it('analyses the allocations partition the migrations analysed empty, once allocations fill it', async () => {
    await importDemoCatalogue(t.db)
    const org = await createOrg(t.db, { tradingName: 'Statistics Florist' })
    const api = client(t.app, org.apiKey)
    const quote = await api.post('/quotes/carbon', floristQuote(org.organisationId))
    expect(quote.statusCode).toBe(201)
    const body = {
      organisationId: org.organisationId,
      quoteId: quote.json().quoteId,
      credits: { amount: quote.json().credits.amounts.total },
    }
    const first = await api.post('/funds/allocations', body, { 'idempotency-key': randomUUID() })
    expect(first.statusCode).toBe(201)
    const { rows } = await sql<{ partition: string }>`
      SELECT tableoid::regclass::text AS partition FROM allocations WHERE id = ${first.json().fundsAllocationId}`.execute(t.db)
    const partition = rows[0]?.partition as string
    expect(partition).toMatch(/^allocations_/)
    expect(await estimatedRows(partition)).toBeLessThanOrEqual(0)
    for (let i = 0; i < 80; i++) {
      expect((await api.post('/funds/allocations', body, { 'idempotency-key': randomUUID() })).statusCode).toBe(201)
    }
    // The API's connections report their counts within 10 s of falling idle; the worker then analyses the partition
    // (perhaps before the last of them: once more than 50 rows have come, as autovacuum would).
    const analysed = await until(
      () => estimatedRows(partition),
      (n) => n > 50,
      20_000,
    )
    expect(analysed).toBeGreaterThan(50)
    expect(analysed).toBeLessThanOrEqual(81)
  })
})

describe('where the worker runs', () => {
  it('not on the embedded database, nor where TABLE_STATISTICS_WORKER is false', async () => {
    const on = await createTestApp({ TABLE_STATISTICS_WORKER: 'true' })
    try {
      expect(on.app.tableStatistics !== undefined).toBe(onPostgres())
    } finally {
      await on.close()
    }
    if (!onPostgres()) return
    const off = await createTestApp({ TABLE_STATISTICS_WORKER: 'false' })
    try {
      expect(off.app.tableStatistics).toBeUndefined()
    } finally {
      await off.close()
    }
  })
})
