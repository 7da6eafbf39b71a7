// Where a measured run's CPU went: the API process, and the Postgres backends serving the run's database (read from
// /proc, as the API's own figure). The backends are those connected to the database when the run starts, so the
// API's pool must be warm (a warm-up run first); a backend opened during the run is not counted.
import { cpuSecondsOf } from './processes.js'
import { withClient } from './database.js'

export interface CpuSplit {
  /** CPU seconds of the API process during the run. */
  apiSeconds: number
  /** CPU seconds of the database's backends during the run. */
  postgresSeconds: number
}

export async function startCpuSplit(databaseUrl: string, apiPid: number | undefined): Promise<() => CpuSplit> {
  const name = new URL(databaseUrl).pathname.slice(1)
  const { rows } = await withClient(databaseUrl, (c) =>
    c.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]),
  )
  const backends = rows.map((r) => r.pid)
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + (cpuSecondsOf(pid) ?? 0), 0)
  const apiBefore = cpuSecondsOf(apiPid) ?? 0
  const postgresBefore = sum(backends)
  return () => ({ apiSeconds: (cpuSecondsOf(apiPid) ?? 0) - apiBefore, postgresSeconds: sum(backends) - postgresBefore })
}
