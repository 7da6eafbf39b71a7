import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// Profit share for organisation trees (docs/pricing.md, "Profit share"): each organisation's share of what its parent
// receives of the service fee, its billing details, a root's settlement model, and each allocation's profit-share
// lines, written by the allocation's own INSERT.
export async function up(db: Kysely<any>): Promise<void> {
  // A constant default: a catalogue-only change, no table rewrite. 6 decimals, like a service fee.
  await sql`ALTER TABLE organisations ADD COLUMN relative_profit_share numeric(7, 6) NOT NULL DEFAULT 0`.execute(db)
  await sql`
    ALTER TABLE organisations ADD CONSTRAINT organisations_relative_profit_share_check
      CHECK (relative_profit_share >= 0 AND relative_profit_share <= 1)`.execute(db)
  // {currencyCode, email, taxNumber, companyRegistrationNumber, countryCode, state}; NULL: billed in the organisation's
  // own currency, taxed where its address is.
  await sql`ALTER TABLE organisations ADD COLUMN billing jsonb`.execute(db)
  // Set on a root only (its descendants inherit it); NULL on a root means the default, gross.
  await sql`ALTER TABLE organisations ADD COLUMN settlement_model text`.execute(db)
  await sql`
    ALTER TABLE organisations ADD CONSTRAINT organisations_settlement_model_check
      CHECK (settlement_model IN ('net', 'gross', 'invoice') AND parent_id IS NULL OR settlement_model IS NULL)`.execute(db)
  // NULL when no organisation up the chain keeps a share: nothing at all is stored then. Otherwise a compact array,
  // [settlementModel, line, …], each line [level, fundsShare, taxRate, tax] or, billed in another currency,
  // [level, fundsShare, taxRate, tax, billingCurrency, rate, billingShare] (src/db/repositories/allocations.ts). A
  // reversal stores nothing: its lines are its allocation's, negated.
  await sql`ALTER TABLE allocations ADD COLUMN profit_share jsonb`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE allocations DROP COLUMN profit_share`.execute(db)
  await sql`ALTER TABLE organisations DROP COLUMN settlement_model`.execute(db)
  await sql`ALTER TABLE organisations DROP COLUMN billing`.execute(db)
  await sql`ALTER TABLE organisations DROP COLUMN relative_profit_share`.execute(db)
}
