// The service configuration: read once from the environment, validated, frozen. The only reader of process.env.
import { existsSync } from 'node:fs'
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './domain/webhooks.js'
import ipaddr from 'ipaddr.js'

const Int = (options: { default: number; minimum: number; maximum?: number; description: string }) => Type.Integer(options)

export const ConfigSchema = Type.Object(
  {
    PORT: Int({ default: 3000, minimum: 0, maximum: 65535, description: 'TCP port the API listens on' }),
    HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Interface to bind; 0.0.0.0 in containers' }),
    DATABASE_URL: Type.Optional(
      Type.String({
        pattern: '^postgres(ql)?://',
        description: 'Postgres connection string; when unset the embedded database (PGlite) under DATA_DIR is used',
      }),
    ),
    DATA_DIR: Type.String({ default: '.data', minLength: 1, description: 'Directory of the embedded database and demo credentials' }),
    DATABASE_POOL_MAX: Int({ default: 10, minimum: 1, maximum: 200, description: 'Maximum Postgres connections per process' }),
    DATABASE_CONNECT_TIMEOUT_MS: Int({
      default: 2000,
      minimum: 100,
      description: 'Wait for a pooled connection, or to open a new one, before answering 503',
    }),
    DATABASE_QUERY_TIMEOUT_MS: Int({
      default: 4000,
      minimum: 100,
      description:
        'Client-side bound on every statement (no answer in time: 503, the connection is dropped); above DATABASE_STATEMENT_TIMEOUT_MS',
    }),
    DATABASE_STATEMENT_TIMEOUT_MS: Int({
      default: 3000,
      minimum: 100,
      description: 'Postgres statement_timeout for API connections; below DATABASE_QUERY_TIMEOUT_MS',
    }),
    DATABASE_STARTUP_TIMEOUT_MS: Int({
      default: 30000,
      minimum: 0,
      description: 'At start-up, how long to retry (with backoff) a Postgres that cannot be reached before exiting with status 1',
    }),
    DATABASE_REPLICA_URL: Type.Optional(
      Type.String({
        pattern: '^postgres(ql)?://',
        description:
          'A streaming replica of DATABASE_URL for reconciliation reads and exports; unset = every read on the primary. Unreachable or lagging = reads on the primary until it recovers',
      }),
    ),
    DATABASE_REPLICA_MAX_LAG_MS: Int({
      default: 5000,
      minimum: 100,
      maximum: 3600000,
      description: 'Replay lag above which the replica is skipped (reads on the primary until it is back within half of it)',
    }),
    DATABASE_REPLICA_CHECK_INTERVAL_MS: Int({
      default: 1000,
      minimum: 50,
      maximum: 60000,
      description: "How often each process checks the replica's health and replay lag",
    }),
    READINESS_TIMEOUT_MS: Int({
      default: 750,
      minimum: 50,
      maximum: 10000,
      description: 'How long /readyz waits for the database before answering 503',
    }),
    MIGRATE_ON_START: Type.Boolean({
      default: false,
      description: 'Run pending migrations at start-up on Postgres (the embedded database always migrates)',
    }),
    DEMO_BOOTSTRAP: Type.Boolean({
      default: true,
      description: 'On the first embedded start, create a demo organisation, API key and catalogue',
    }),
    DEMO_ALLOWED_ORIGINS: Type.Optional(
      Type.String({
        description:
          "Embedded database with DEMO_BOOTSTRAP only: comma-separated origins added to the demo organisation's allowed origins at start-up (npm run demo sets the demo shop's)",
      }),
    ),
    DEMO_ACTIVITY: Type.Boolean({
      default: false,
      description:
        'Embedded database with DEMO_BOOTSTRAP only: seed four weeks of demo allocations and reversals (a child organisation in GBP and one in EUR) at start-up, once (npm run demo sets it)',
    }),
    LOG_LEVEL: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
      { default: 'info', description: 'pino log level' },
    ),
    RATE_LIMIT_PER_MINUTE: Int({
      default: 6000,
      minimum: 1,
      description: 'Requests per minute per API key: per process, or shared by every process when REDIS_URL is set',
    }),
    REDIS_URL: Type.Optional(
      Type.String({
        pattern: '^rediss?://',
        description: 'Redis for the rate limit shared across API processes; unset = counted per process. Unreachable = fail open',
      }),
    ),
    METRICS_HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Interface of the Prometheus /metrics listener' }),
    METRICS_PORT: Int({
      default: 9464,
      minimum: 0,
      maximum: 65535,
      description: 'Port of the Prometheus /metrics listener (never the API port); 0 turns metrics off',
    }),
    FX_MAX_AGE_DAYS: Int({
      default: 7,
      minimum: 1,
      maximum: 3650,
      description: 'Warn at start-up when the exchange rates in use are older than this many days',
    }),
    AUTH_CACHE_TTL_MS: Int({
      default: 5000,
      minimum: 0,
      maximum: 10000,
      description: 'How long a resolved API key is cached; a revoked key stops working within this time',
    }),
    CATALOGUE_CACHE_TTL_MS: Int({
      default: 5000,
      minimum: 0,
      maximum: 600000,
      description: 'How long the project catalogue and emission factors are cached in-process',
    }),
    QUOTE_CACHE_SIZE: Int({
      default: 500,
      minimum: 0,
      maximum: 1000000,
      description: 'Recent quotes kept in memory for reads and allocations (quotes never change); 0 disables',
    }),
    SESSION_TTL_SECONDS: Int({ default: 1800, minimum: 1, maximum: 86400, description: 'Lifetime of a post-purchase or checkout session' }),
    OPERATOR_LEGAL_NAME: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: "Legal name of whoever runs this deployment and collects contributions; named in the SDK's US disclosure",
      }),
    ),
    DISCLOSURE_PAYOUT_DAYS: Type.String({
      default: '30-60',
      pattern: '^[0-9]{1,3}(-[0-9]{1,3})?$',
      description: 'Days within which contributions reach the impact partners ("30-60" or "45"); named in the SDK\'s US disclosure',
    }),
    AMOUNT_MAX: Int({ default: 1000000, minimum: 1, description: 'Largest accepted transaction or allocation amount, in currency units' }),
    IDEMPOTENCY_LOCK_TIMEOUT_MS: Int({
      default: 2000,
      minimum: 50,
      description: 'How long a duplicate waits for an in-flight request with the same key before 409; below DATABASE_STATEMENT_TIMEOUT_MS',
    }),
    SMTP_URL: Type.Optional(
      Type.String({
        pattern: '^smtps?://',
        description: 'SMTP server for tax receipts, e.g. smtp://user:pass@host:587; unset = receipts stay queued',
      }),
    ),
    SMTP_FROM: Type.String({
      default: 'Canopy receipts <receipts@canopy.invalid>',
      minLength: 3,
      description: 'From address of tax receipts',
    }),
    OUTBOX_POLL_INTERVAL_MS: Int({ default: 2000, minimum: 50, description: 'How often the receipt sender looks for queued receipts' }),
    REQUEST_TIMEOUT_MS: Int({ default: 30000, minimum: 1000, description: 'Maximum time to receive a whole request' }),
    SHUTDOWN_GRACE_MS: Int({ default: 10000, minimum: 100, description: 'Time in-flight requests get to finish on SIGTERM' }),
    BODY_LIMIT_BYTES: Int({ default: 1048576, minimum: 1024, maximum: 10485760, description: 'Largest accepted request body' }),
    WEBHOOK_WORKER: Type.Boolean({
      default: true,
      description: 'Deliver webhooks from this process (every API process may; they share the queue)',
    }),
    WEBHOOK_RETRY_SCHEDULE: Type.String({
      default: DEFAULT_RETRY_SCHEDULE,
      minLength: 2,
      description: 'Delays between webhook attempts, comma-separated (<n>ms|s|m|h|d), each ±20%; default: the Standard Webhooks schedule',
    }),
    WEBHOOK_ALLOW_HTTP: Type.Boolean({ default: false, description: 'Accept http: webhook URLs (https only by default)' }),
    WEBHOOK_ALLOWED_CIDRS: Type.Optional(
      Type.String({
        description:
          'Comma-separated address ranges webhooks may reach although private or loopback (development and tests); logged at start',
      }),
    ),
    WEBHOOK_POLL_INTERVAL_MS: Int({
      default: 1000,
      minimum: 50,
      maximum: 60000,
      description: 'How often the webhook worker looks for due deliveries (a commit in this process wakes it at once)',
    }),
    WEBHOOK_LEASE_SECONDS: Int({
      default: 60,
      minimum: 20,
      maximum: 3600,
      description:
        'How long a claimed delivery stays claimed; after a crash it is retried once the lease ends (above the 15 s request bound)',
    }),
    WEBHOOK_CONCURRENCY: Int({ default: 16, minimum: 1, maximum: 256, description: 'Webhook requests in flight per process' }),
    PARTITION_MAINTENANCE: Type.Boolean({
      default: true,
      description: 'Create the partitions of the months ahead and drop expired months in this process (one process works at a time)',
    }),
    PARTITION_MAINTENANCE_INTERVAL_MS: Int({
      default: 3600000,
      minimum: 1000,
      maximum: 86400000,
      description: 'How often partition maintenance runs (it also runs at start)',
    }),
    TABLE_STATISTICS_WORKER: Type.Boolean({
      default: true,
      description:
        "On Postgres with autovacuum off (server-wide or for a table): analyse the tables autovacuum's analyse rule says are due (one process works at a time)",
    }),
    TABLE_STATISTICS_INTERVAL_MS: Int({
      default: 1000,
      minimum: 100,
      maximum: 3600000,
      description: 'How often the tables due an ANALYZE are looked for (one catalogue query)',
    }),
    QUOTE_RETENTION_DAYS: Int({
      default: 90,
      minimum: 1,
      maximum: 36500,
      description: 'Days unallocated quotes and their sessions are kept (whole months are dropped once older; allocated quotes are kept)',
    }),
    WEBHOOK_ATTEMPT_RETENTION_DAYS: Int({
      default: 30,
      minimum: 1,
      maximum: 36500,
      description: 'Days webhook delivery attempts are kept (the deliveries themselves are kept)',
    }),
    TAX_RECEIPT_RETENTION_DAYS: Int({
      default: 30,
      minimum: 1,
      maximum: 36500,
      description: 'Days the tax-receipt outbox keeps its rows (a month with a receipt still pending is kept)',
    }),
    SUMMARY_ROLLUP_WORKER: Type.Boolean({
      default: true,
      description: 'Roll up closed time for allocation summaries in this process (every API process may; one works at a time)',
    }),
    SUMMARY_ROLLUP_INTERVAL_MS: Int({
      default: 30000,
      minimum: 100,
      maximum: 3600000,
      description: 'How often the summary rollup worker rolls up newly closed time',
    }),
    SUMMARY_ROLLUP_DELAY_SECONDS: Int({
      default: 300,
      minimum: 1,
      maximum: 86400,
      description:
        'How long after a moment its records are rolled up: longer than any allocation can take from its timestamp to its commit (never less than 10 × (DATABASE_CONNECT_TIMEOUT_MS + DATABASE_QUERY_TIMEOUT_MS) is used)',
    }),
    TRUST_PROXY: Type.String({
      default: 'false',
      minLength: 1,
      description:
        "Proxies in front of the API whose X-Forwarded-For/-Proto/-Host are believed: false (none), the number of proxies (1 behind the compose file's Caddy), or their addresses/CIDR ranges, comma-separated",
    }),
    PUBLIC_BASE_URL: Type.Optional(
      Type.String({
        pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
        description: "The API's public base URL, used in links it sends (the Hub's set-password links); default: http://HOST:PORT",
      }),
    ),
    HUB_SESSION_IDLE_MINUTES: Int({
      default: 30,
      minimum: 1,
      maximum: 1440,
      description: 'A Hub session ends after this many minutes without a request',
    }),
    HUB_SESSION_ABSOLUTE_HOURS: Int({
      default: 12,
      minimum: 1,
      maximum: 168,
      description: 'A Hub session ends this many hours after sign-in, however active',
    }),
    HUB_EMAIL_FROM: Type.String({
      default: 'Canopy Hub <hub@canopy.invalid>',
      minLength: 3,
      description: 'From address of Hub e-mails (invitations); sent through SMTP_URL',
    }),
  },
  { additionalProperties: false },
)

export type Config = Readonly<Static<typeof ConfigSchema>>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
  }
}

export const CONFIG_KEYS = Object.keys(ConfigSchema.properties) as (keyof Config)[]

/** Reads the keys of ConfigSchema from `env`, applies defaults, converts types and reports every problem at once. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = []
  const raw: Record<string, unknown> = {}
  for (const key of CONFIG_KEYS) {
    const value = env[key]
    if (value === undefined || value.trim() === '') continue
    const schema = ConfigSchema.properties[key]
    if (schema.type === 'integer') {
      raw[key] = /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value
    } else if (schema.type === 'boolean') {
      const normalised = value.trim().toLowerCase()
      raw[key] = ['true', '1', 'yes'].includes(normalised) ? true : ['false', '0', 'no'].includes(normalised) ? false : value
    } else {
      raw[key] = value.trim()
    }
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, unknown>
  for (const error of Value.Errors(ConfigSchema, withDefaults)) {
    const key = error.path.replace(/^\//, '')
    problems.push(`${key}=${JSON.stringify(withDefaults[key])}: ${error.message}`)
  }
  if (problems.length === 0) problems.push(...orderingProblems(withDefaults as Config))
  if (problems.length > 0) throw new ConfigError(problems)
  return Object.freeze(withDefaults as Config)
}

/**
 * The database bounds nest: a duplicate's lock wait ends (409) before its statement is cancelled by
 * Postgres, which happens (503, the connection stays usable) before the client gives up on the
 * statement (503, the connection is dropped).
 */
function orderingProblems(config: Config): string[] {
  const problems: string[] = []
  const mustBeBelow = (lower: keyof Config, upper: keyof Config) => {
    if ((config[lower] as number) >= (config[upper] as number)) {
      problems.push(`${lower}=${config[lower]}: must be below ${upper} (${config[upper]})`)
    }
  }
  mustBeBelow('IDEMPOTENCY_LOCK_TIMEOUT_MS', 'DATABASE_STATEMENT_TIMEOUT_MS')
  mustBeBelow('DATABASE_STATEMENT_TIMEOUT_MS', 'DATABASE_QUERY_TIMEOUT_MS')
  if (config.DATABASE_REPLICA_URL && !config.DATABASE_URL) {
    problems.push('DATABASE_REPLICA_URL: needs DATABASE_URL (the embedded database has no replicas)')
  }
  if (!parseRetrySchedule(config.WEBHOOK_RETRY_SCHEDULE)) {
    problems.push(`WEBHOOK_RETRY_SCHEDULE=${JSON.stringify(config.WEBHOOK_RETRY_SCHEDULE)}: must be delays such as 5s,5m,30m,2h`)
  }
  if (trustProxySetting(config.TRUST_PROXY) === undefined) {
    problems.push(
      `TRUST_PROXY=${JSON.stringify(config.TRUST_PROXY)}: must be false, the number of proxies in front (1–10), or their addresses or CIDR ranges, comma-separated` +
        (/^true$/i.test(config.TRUST_PROXY.trim()) ? " (true would believe any client's X-Forwarded-For)" : ''),
    )
  }
  if (config.WEBHOOK_ALLOWED_CIDRS && !validCidrs(config.WEBHOOK_ALLOWED_CIDRS)) {
    problems.push(`WEBHOOK_ALLOWED_CIDRS=${JSON.stringify(config.WEBHOOK_ALLOWED_CIDRS)}: must be CIDR ranges such as 127.0.0.0/8,::1/128`)
  }
  return problems
}

/**
 * TRUST_PROXY as Fastify's trustProxy: false, a number of hops, or the proxies' addresses and ranges. undefined when
 * it is none of these (refused at start-up; `true`, which would trust anyone, included).
 */
export function trustProxySetting(text: string): false | number | string[] | undefined {
  const value = text.trim().toLowerCase()
  if (value === 'false' || value === '0') return false
  if (/^\d{1,2}$/.test(value)) {
    const hops = Number(value)
    return hops >= 1 && hops <= 10 ? hops : undefined
  }
  const parts = value.split(',').map((p) => p.trim())
  if (parts.length === 0 || parts.some((p) => !p)) return undefined
  for (const part of parts) {
    if (part.includes('/')) {
      try {
        ipaddr.parseCIDR(part)
      } catch {
        return undefined
      }
    } else if (!ipaddr.isValid(part)) return undefined
  }
  return parts
}

/** PUBLIC_BASE_URL without a trailing slash, or the listen address (a wildcard HOST as the loopback). */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string {
  if (config.PUBLIC_BASE_URL) return config.PUBLIC_BASE_URL.replace(/\/+$/, '')
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}`
}

/** Comma-separated CIDR ranges, every one of which parses. */
function validCidrs(text: string): boolean {
  try {
    for (const part of text.split(',').map((p) => p.trim())) if (part) ipaddr.parseCIDR(part)
    return true
  } catch {
    return false
  }
}

/**
 * How long after a moment the summary rollup worker rolls up its records (docs/summary.md, "Why a summary is exact"):
 * SUMMARY_ROLLUP_DELAY_SECONDS, and never less than ten statement bounds (connect + query timeouts), the most an
 * allocation's write can take after its timestamp; raising the bounds for a long migration raises it with them.
 */
export const summaryRollupDelayMs = (config: Config): number =>
  Math.max(config.SUMMARY_ROLLUP_DELAY_SECONDS * 1000, 10 * (config.DATABASE_CONNECT_TIMEOUT_MS + config.DATABASE_QUERY_TIMEOUT_MS))

/**
 * Entry points call this first: variables from ./.env (if the file exists) fill in what the real
 * environment does not set; the environment always wins.
 */
export function loadDotEnvFile(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path)
}
