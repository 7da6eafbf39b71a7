import { sql, type Kysely } from 'kysely'
import type { Database, TaxReceiptPayload } from '../database.js'

export interface DueReceipt {
  id: string
  consumerEmail: string
  payload: TaxReceiptPayload
  attempts: number
}

/**
 * Claims up to `limit` pending receipts that are due and not leased by another sender, leasing them
 * until `leaseUntil` and counting the attempt. SKIP LOCKED lets several processes share the outbox;
 * a sender that dies mid-send leaves a lease that simply expires (delivery is at least once).
 */
export async function claimDueReceipts(db: Kysely<Database>, now: Date, leaseUntil: Date, limit: number): Promise<DueReceipt[]> {
  const { rows } = await sql<{ id: string; consumer_email: string; payload: TaxReceiptPayload; attempts: number }>`
    UPDATE tax_receipts SET locked_until = ${leaseUntil}, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM tax_receipts
      WHERE status = 'pending' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id, consumer_email, payload, attempts`.execute(db)
  return rows.map((r) => ({ id: r.id, consumerEmail: r.consumer_email, payload: r.payload, attempts: r.attempts }))
}

export async function markReceiptSent(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('tax_receipts')
    .set({ status: 'sent', sent_at: now, locked_until: null, last_error: null })
    .where('id', '=', id)
    .execute()
}

export async function markReceiptFailedAttempt(
  db: Kysely<Database>,
  id: string,
  error: string,
  next: { retryAt: Date } | { giveUp: true },
): Promise<void> {
  await db
    .updateTable('tax_receipts')
    .set({
      last_error: error.slice(0, 1000),
      locked_until: null,
      ...('giveUp' in next ? { status: 'failed' as const } : { next_attempt_at: next.retryAt }),
    })
    .where('id', '=', id)
    .execute()
}

/** How many receipts wait to be sent, and since when the oldest has waited (for metrics; a cheap aggregate). */
export async function pendingReceiptStats(db: Kysely<Database>): Promise<{ pending: number; oldestPendingAt: Date | null }> {
  const row = await db
    .selectFrom('tax_receipts')
    .select((eb) => [eb.fn.countAll<string>().as('pending'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return { pending: Number(row.pending), oldestPendingAt: row.oldest ? new Date(row.oldest) : null }
}
