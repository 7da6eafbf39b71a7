import { fileURLToPath } from 'node:url'
import { sql } from 'kysely'
import { openPostgres } from '../src/db/connect.js'
import { createApiKey } from '../src/services/api-keys.js'
import { startApi, stopService } from './harness/processes.js'
const url = 'postgres://postgres@127.0.0.1:5432/canopy_summary_bench_kept'
const handle = openPostgres({ url, poolMax: 1 })
const { rows } = await sql<{ id: string }>`SELECT id FROM organisations WHERE parent_id IS NULL LIMIT 1`.execute(handle.db)
const key = (await createApiKey(handle.db, rows[0]!.id, 'live', new Date())).apiKey
await handle.close()
const service = await startApi({ name: 'api', cwd: fileURLToPath(new URL('..', import.meta.url)), databaseUrl: url, logLevel: 'warn' })
for (const path of [
  '/v3/funds/allocations/summary?dateTimeFrom=2025-06-01T00:00:00Z&dateTimeTo=2025-07-01T00:00:00Z&groupBy=day',
  '/v3/funds/allocations/summary?dateTimeFrom=2025-01-01T00:00:00Z&dateTimeTo=2026-01-01T00:00:00Z&groupBy=impactPartner',
  '/v3/funds/allocations/impact?dateTimeFrom=2025-06-01T00:00:00Z&dateTimeTo=2025-07-01T00:00:00Z&limit=10',
  '/v3/organisations/' + rows[0]!.id,
]) {
  const times: number[] = []
  for (let i = 0; i < 40; i++) {
    const t0 = performance.now()
    const res = await fetch(service.url + path, { headers: { authorization: `Bearer ${key}` } })
    await res.text()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  console.log(path.slice(0, 60), 'median', times[20]!.toFixed(1), 'p90', times[36]!.toFixed(1))
}
await stopService(service)
