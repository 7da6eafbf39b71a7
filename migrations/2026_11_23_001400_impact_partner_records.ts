import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// A partner-led index of reconciliation records (docs/reconciliation.md): one row per distinct impact partner of each
// record (allocation or reversal), so a page filtered by partner is an ordered index range read of that partner's
// records, not a scan of the whole tree. Written by the allocation and reversal INSERTs themselves (one statement).
export async function up(db: Kysely<any>): Promise<void> {
  // funds_date_time is the record's created_at (same type and precision), so positions and cursors compare equal.
  // The key carries organisation_id and allocation_id too, so a page (with or without an organisation filter) is an
  // index-only read; a second index led by (partner, organisation) would cost every row another index entry.
  // No foreign keys: the rows are written only in the statement that writes their record, and an FK check would cost
  // every allocation an extra index probe.
  await sql`
    CREATE TABLE impact_record_partners (
      impact_partner_id uuid NOT NULL,
      root_organisation_id uuid NOT NULL,
      funds_date_time timestamptz NOT NULL,
      record_id uuid NOT NULL,
      organisation_id uuid NOT NULL,
      allocation_id uuid NOT NULL,
      PRIMARY KEY (impact_partner_id, root_organisation_id, funds_date_time, record_id) INCLUDE (organisation_id, allocation_id)
    )`.execute(db)
  await sql`
    INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id)
    SELECT DISTINCT (e.entry->>'impactPartnerId')::uuid, a.root_organisation_id, a.created_at, a.id, a.organisation_id, a.id
    FROM allocations a CROSS JOIN LATERAL jsonb_array_elements(a.entries) AS e(entry)`.execute(db)
  // A reversal's lines are its allocation's.
  await sql`
    INSERT INTO impact_record_partners (impact_partner_id, root_organisation_id, funds_date_time, record_id, organisation_id, allocation_id)
    SELECT DISTINCT (e.entry->>'impactPartnerId')::uuid, r.root_organisation_id, r.created_at, r.id, r.organisation_id, r.allocation_id
    FROM allocation_reversals r JOIN allocations a ON a.id = r.allocation_id
    CROSS JOIN LATERAL jsonb_array_elements(a.entries) AS e(entry)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE impact_record_partners`.execute(db)
}
