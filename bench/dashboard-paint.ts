// npm run bench:dashboard: the Hub dashboard's first paint in Chromium on the reconciliation bench's database (issue 20,
// reported, not asserted). Needs the database `npm run bench:recon` keeps with RECON_DATABASE (default
// canopy_recon_1m: 1,000,000 records of 2025). Starts the compiled API on it, signs a new admin of the tree's root in,
// and loads the dashboard five times per window (a 30-day window by day, a 365-day window by week), reporting the
// median of: first contentful paint, the headline figures shown, the bars drawn (from navigation start).
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { chromium } from 'playwright-core'
import { openPostgres } from '../src/db/connect.js'
import { createUserAsOperator, setPasswordWithLink } from '../src/services/hub/users.js'
import { databaseUrl } from './harness/database.js'
import { startApi, stopService } from './harness/processes.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const DATABASE = process.env.RECON_DATABASE ?? 'canopy_recon_1m'
const LOADS = 5
const PASSWORD = 'dashboard bench password 2026'
const WINDOWS = [
  { name: '30 days by day', query: 'window=custom&from=2025-06-01&to=2025-06-30' },
  { name: '365 days by week', query: 'window=custom&from=2025-01-01&to=2025-12-31' },
]

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN

const url = databaseUrl(adminUrl, DATABASE)
const handle = openPostgres({ url, poolMax: 1 })
const email = `bench-${randomUUID().slice(0, 8)}@example.com`
try {
  const { rows } = await sql<{ id: string }>`SELECT id FROM organisations WHERE parent_id IS NULL ORDER BY created_at LIMIT 1`.execute(
    handle.db,
  )
  const rootId = rows[0]?.id
  if (!rootId) throw new Error(`${DATABASE} has no organisation: run RECON_DATABASE=${DATABASE} npm run bench:recon first`)
  const now = new Date()
  const created = await createUserAsOperator(
    handle.db,
    { organisationId: rootId, email, role: 'analyst' },
    { now, publicBaseUrl: 'http://127.0.0.1' },
  )
  const token = new URL(created.setPasswordUrl).hash.replace('#token=', '')
  await setPasswordWithLink({ db: handle.db, clock: () => now }, { token, password: PASSWORD, ip: '127.0.0.1' })
} finally {
  await handle.close()
}

const service = await startApi({ name: 'api (dashboard)', cwd: root, databaseUrl: url, logLevel: 'warn' })
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--disable-gpu', '--no-first-run'] })
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'UTC' })
  const page = await context.newPage()
  await page.goto(`${service.url}/hub/sign-in`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByLabel('Password').press('Enter')
  await page.getByRole('navigation', { name: 'Hub' }).waitFor()
  console.log(`| window | first contentful paint ms | figures shown ms | bars drawn ms |\n|---|---:|---:|---:|`)
  for (const window of WINDOWS) {
    const fcp: number[] = []
    const figures: number[] = []
    const bars: number[] = []
    for (let i = 0; i <= LOADS; i++) {
      await page.goto(`${service.url}/hub/dashboard?${window.query}`)
      await page.locator('[data-figure="allocated"]').first().waitFor({ timeout: 60_000 })
      const shown = await page.evaluate(() => performance.now())
      await page.locator('.chart[data-drawn="true"] canvas').first().waitFor({ timeout: 60_000 })
      const drawn = await page.evaluate(() => performance.now())
      const paint = await page.evaluate(
        // A browser's performance timeline (Node's typings do not know its 'paint' entries).
        () =>
          (performance.getEntriesByType as (type: string) => { name: string; startTime: number }[])('paint').find(
            (e) => e.name === 'first-contentful-paint',
          )?.startTime ?? Number.NaN,
      )
      if (i === 0) continue // the first load warms the server's caches and the browser's
      fcp.push(paint)
      figures.push(shown)
      bars.push(drawn)
    }
    console.log(`| ${window.name} | ${Math.round(median(fcp))} | ${Math.round(median(figures))} | ${Math.round(median(bars))} |`)
  }
} finally {
  await browser.close()
  await stopService(service)
}
