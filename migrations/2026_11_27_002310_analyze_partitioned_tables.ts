import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// 001900 and 002300 move every row of the tables below into new monthly partitions, which have no statistics until
// something analyses them: autovacuum gets to a partition only after its next nap (never, where it is off) and never
// analyses a partitioned table itself. Until then the planner guesses, and guesses badly: a converted ledger of
// 1,000,000 records planned a tree's page as a sort of every record (1.1 s a page instead of 6 ms; docs/partitioning.md).
// ANALYZE of a partitioned table also analyses each of its partitions. It holds no lock that blocks writes.
const TABLES = [
  'quotes',
  'sessions',
  'webhook_attempts',
  'tax_receipts',
  'allocations',
  'allocation_reversals',
  'impact_record_partners',
  'webhook_events',
  'webhook_deliveries',
  'allocation_idempotency_keys',
  'allocation_reversal_keys',
]

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES) await sql`ANALYZE ${sql.table(table)}`.execute(db)
}

// Statistics are not schema: nothing to undo.
export async function down(): Promise<void> {}
