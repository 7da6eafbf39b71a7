// The bench's settings, read once from the environment (docs/benchmarks.md lists them).
import { availableParallelism } from 'node:os'

export interface BenchConfig {
  /** Postgres URL whose server gets the scratch databases (any database on it; `postgres` by default). */
  adminUrl: string
  /** Connection counts, each measured in turn (BENCH_CONNECTIONS=10,20,50). */
  connections: number[]
  /** The count at which the quote's half-rate p99 is checked and database details are printed. */
  referenceConnections: number
  warmupSeconds: number
  durationSeconds: number
  /** Case-insensitive name fragments, comma-separated; the baseline always runs. */
  only: string[]
  logLevel: string
  /** Measure the database side (needs a settle pause before each snapshot, see harness/database.ts). */
  databaseSide: boolean
  /** pg_stat_activity sampling interval. */
  sampleIntervalMs: number
  cpus: number
}

/** A positive number (an integer with `integer`) from the environment, or `fallback` when unset. */
export const positive = (name: string, fallback: number, integer = false): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`)
  }
  return value
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const connections = (env.BENCH_CONNECTIONS ?? '10,20,50')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map((part) => {
      const n = Number(part)
      if (!Number.isInteger(n) || n <= 0) throw new Error(`BENCH_CONNECTIONS: ${JSON.stringify(part)} is not a positive integer`)
      return n
    })
  if (connections.length === 0) throw new Error('BENCH_CONNECTIONS is empty')
  // 20 by default: between the API's pool size (10) and the heaviest load; otherwise the middle count.
  const middle = [...connections].sort((a, b) => a - b)[Math.floor((connections.length - 1) / 2)] as number
  const referenceConnections = positive('BENCH_REFERENCE_CONNECTIONS', connections.includes(20) ? 20 : middle, true)
  if (!connections.includes(referenceConnections)) {
    throw new Error(`BENCH_REFERENCE_CONNECTIONS=${referenceConnections} is not one of BENCH_CONNECTIONS (${connections.join(',')})`)
  }
  return {
    adminUrl: env.BENCH_DATABASE_URL ?? env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    connections,
    referenceConnections,
    warmupSeconds: positive('BENCH_WARMUP', 3),
    durationSeconds: positive('BENCH_DURATION', 8),
    only: (env.BENCH_ONLY ?? '')
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part !== ''),
    logLevel: env.BENCH_LOG_LEVEL ?? 'warn',
    databaseSide: !['0', 'false', 'off', 'no'].includes((env.BENCH_DB_SIDE ?? '1').toLowerCase()),
    sampleIntervalMs: positive('BENCH_SAMPLE_MS', 50, true),
    cpus: availableParallelism(),
  }
}

export const selected = (config: BenchConfig, name: string): boolean =>
  config.only.length === 0 || config.only.some((part) => name.toLowerCase().includes(part))

/**
 * A variant of the API to compare (bench/process-spread.ts): words, `KEY=value` for its environment and anything else a
 * Node flag.
 */
export function variantParts(variant: string): { env: Record<string, string>; nodeArgs: string[] } {
  const env: Record<string, string> = {}
  const nodeArgs: string[] = []
  for (const word of variant.split(' ').filter(Boolean)) {
    const assignment = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(word)
    if (assignment) env[assignment[1] as string] = assignment[2] as string
    else nodeArgs.push(word)
  }
  return { env, nodeArgs }
}
