// Tables partitioned by month (docs/partitioning.md): their partitions' names and bounds, which months to create ahead
// and which partitions retention may drop. Months are UTC calendar months; a partition holds [first instant of its
// month, first instant of the next).

/**
 * The partitioned tables, in the order maintenance visits them: sessions before quotes, whose months they reference
 * (a quote's month is dropped after its sessions'). The ledger's tables (LEDGER_TABLES) get their months made ahead
 * like the others and are never dropped.
 */
export const PARTITIONED_TABLES = [
  'sessions',
  'quotes',
  'webhook_attempts',
  'tax_receipts',
  'allocations',
  'allocation_reversals',
  'impact_record_partners',
  'webhook_events',
  'webhook_deliveries',
] as const
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number]

/** What reconciliation, statements, summaries and the audit trail read: kept forever, whatever the retention settings. */
export const LEDGER_TABLES: ReadonlySet<PartitionedTable> = new Set([
  'allocations',
  'allocation_reversals',
  'impact_record_partners',
  'webhook_events',
  'webhook_deliveries',
])

export const PARTITION_KEY: Readonly<Record<PartitionedTable, string>> = {
  quotes: 'created_at',
  sessions: 'created_at',
  webhook_attempts: 'attempted_at',
  tax_receipts: 'created_at',
  allocations: 'created_at',
  // A reversal lives in its own month (a window of records reads the reversals made in it); one reversal per allocation
  // is kept by allocation_reversal_keys.
  allocation_reversals: 'created_at',
  impact_record_partners: 'funds_date_time',
  webhook_events: 'created_at',
  webhook_deliveries: 'created_at',
}

/** Months created ahead of the current one, so that a stopped maintenance job leaves months of margin. */
export const MONTHS_AHEAD = 3

export interface Retention {
  /** Unallocated quotes and their sessions (QUOTE_RETENTION_DAYS). */
  quoteDays: number
  /** Webhook delivery attempts (WEBHOOK_ATTEMPT_RETENTION_DAYS). */
  webhookAttemptDays: number
  /** Tax receipts sent (TAX_RECEIPT_RETENTION_DAYS); a month with a receipt still pending is kept. */
  taxReceiptDays: number
}

/** Days a month of `table` is kept after its end; undefined: forever (the ledger). */
function retentionDays(table: PartitionedTable, r: Retention): number | undefined {
  if (LEDGER_TABLES.has(table)) return undefined
  return table === 'quotes' || table === 'sessions' ? r.quoteDays : table === 'webhook_attempts' ? r.webhookAttemptDays : r.taxReceiptDays
}

/**
 * Whether a quote made at `createdAt` is past its retention at `now` (QUOTE_RETENTION_DAYS): from then on retention may
 * drop its month at any run, so it is no longer allocated.
 */
export const isPastQuoteRetention = (createdAt: Date, now: Date, quoteDays: number): boolean =>
  now.getTime() - createdAt.getTime() >= quoteDays * 86_400_000

export interface Month {
  year: number
  /** 1–12 */
  month: number
}

export const monthOf = (at: Date): Month => ({ year: at.getUTCFullYear(), month: at.getUTCMonth() + 1 })
export const addMonths = (m: Month, n: number): Month => {
  const index = m.year * 12 + (m.month - 1) + n
  return { year: Math.floor(index / 12), month: (index % 12) + 1 }
}
export const monthStart = (m: Month): Date => new Date(Date.UTC(m.year, m.month - 1, 1))
export const monthEnd = (m: Month): Date => monthStart(addMonths(m, 1))

/** `quotes_p2026_11`: the table's name, then the month. */
export const partitionName = (table: PartitionedTable, m: Month): string => `${table}_p${m.year}_${String(m.month).padStart(2, '0')}`
export const defaultPartitionName = (table: PartitionedTable): string => `${table}_default`

/** The month a partition of `table` is for, from its name; undefined for the default partition or a foreign name. */
export function monthOfPartition(table: PartitionedTable, name: string): Month | undefined {
  const match = new RegExp(`^${table}_p(\\d{4})_(\\d{2})$`).exec(name)
  if (!match) return undefined
  const month = Number(match[2])
  return month >= 1 && month <= 12 ? { year: Number(match[1]), month } : undefined
}

/** The months from `from` to `to`, both included (none when `from` is later). */
export function monthsBetween(from: Month, to: Month): Month[] {
  const months: Month[] = []
  for (let m = from; m.year * 12 + m.month <= to.year * 12 + to.month; m = addMonths(m, 1)) months.push(m)
  return months
}

/** The months that should exist at `now`: the current one and MONTHS_AHEAD after it. */
export const monthsToCreate = (now: Date): Month[] => monthsBetween(monthOf(now), addMonths(monthOf(now), MONTHS_AHEAD))

/**
 * How long a month of quotes is kept past its last quote's retention. An allocation names a quote only within its
 * retention (isPastQuoteRetention), and commits within seconds of being priced; the month's allocated quotes are copied
 * before its partition is detached, without a lock, so every allocation that can name one must be committed by then.
 * A day also covers API processes whose clocks disagree.
 */
export const QUOTE_DROP_GRACE_MS = 86_400_000

/**
 * Whether retention drops the partition of `month` at `now`: every instant it can hold is older than the table's
 * retention (its end is at least that many days before now; for quotes, and QUOTE_DROP_GRACE_MS). Never the current
 * month or a later one, never the ledger.
 */
export function isExpired(table: PartitionedTable, month: Month, now: Date, retention: Retention): boolean {
  const days = retentionDays(table, retention)
  if (days === undefined) return false
  const grace = table === 'quotes' ? QUOTE_DROP_GRACE_MS : 0
  return monthEnd(month).getTime() <= now.getTime() - days * 86_400_000 - grace
}

/**
 * The earliest time an allocation naming a quote of `month` can have: the month's start (an allocation is made after
 * its quote), less the grace for clocks. Allocations are partitioned by that time, so the copy of a month's allocated
 * quotes reads only the allocations' months from then on.
 */
export const earliestAllocationNaming = (month: Month): Date => new Date(monthStart(month).getTime() - QUOTE_DROP_GRACE_MS)
