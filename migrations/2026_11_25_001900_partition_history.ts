import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The tables that grow with every checkout and are kept for a limited time become partitioned by month on their time
// column (docs/partitioning.md): quotes and sessions (QUOTE_RETENTION_DAYS), webhook attempts and the tax-receipt outbox
// (30 days). Each gets a partition per month from its oldest row's month to three months ahead, and a DEFAULT
// partition so that an insert never fails (a row of a month without a partition lands there and is never dropped).
// A key of a partitioned table must hold its partition column, so the primary keys become (id, time); ids stay unique
// (UUIDv7, generated once). A session's quote is named by (quote_id, created_at): both are written in one statement at
// the same instant. The allocation's foreign key into quotes cannot reference a partitioned table by id alone and is
// dropped: the service reads the quote before it writes an allocation for it, quotes are never updated or deleted, and
// retention copies every allocated quote into retained_quotes before it drops a month. Foreign keys FROM these tables
// (to organisations, webhook deliveries and allocations) stay.

interface Table {
  name: string
  key: string
  /** What follows the copy: the table's keys, indexes and foreign keys, as they were. */
  keys: string[]
}

const TABLES: Table[] = [
  {
    name: 'quotes',
    key: 'created_at',
    keys: [
      'ALTER TABLE quotes ADD CONSTRAINT quotes_pkey PRIMARY KEY (id, created_at)',
      'ALTER TABLE quotes ADD CONSTRAINT quotes_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    ],
  },
  {
    name: 'sessions',
    key: 'created_at',
    keys: [
      'ALTER TABLE sessions ADD CONSTRAINT sessions_pkey PRIMARY KEY (id, created_at)',
      'ALTER TABLE sessions ADD CONSTRAINT sessions_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
      // A session is written with its quote, at its quote's time: (quote, time) names the quote in its partition.
      'ALTER TABLE sessions ADD CONSTRAINT sessions_quote_fkey FOREIGN KEY (quote_id, created_at) REFERENCES quotes (id, created_at)',
    ],
  },
  {
    name: 'webhook_attempts',
    key: 'attempted_at',
    keys: [
      'ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id, attempted_at)',
      'CREATE INDEX webhook_attempts_delivery_id_idx ON webhook_attempts (delivery_id, attempted_at)',
      'ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE',
    ],
  },
  {
    name: 'tax_receipts',
    key: 'created_at',
    keys: [
      'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_pkey PRIMARY KEY (id, created_at)',
      // A receipt is written in its allocation's statement, at its allocation's time: (allocation, time) is unique
      // exactly when the allocation is.
      'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_id_key UNIQUE (allocation_id, created_at)',
      "CREATE INDEX tax_receipts_pending_idx ON tax_receipts (next_attempt_at) WHERE status = 'pending'",
      'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_id_fkey FOREIGN KEY (allocation_id) REFERENCES allocations(id)',
      'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    ],
  },
]

const MONTHS_AHEAD = 3

/** The first instants of the UTC months from `from`'s to `to`'s, both included. */
function monthStarts(from: Date, to: Date): Date[] {
  const starts: Date[] = []
  for (let y = from.getUTCFullYear(), m = from.getUTCMonth(); y * 12 + m <= to.getUTCFullYear() * 12 + to.getUTCMonth(); m++) {
    starts.push(new Date(Date.UTC(y, m, 1)))
  }
  return starts
}

const partitionName = (table: string, start: Date) =>
  `${table}_p${start.getUTCFullYear()}_${String(start.getUTCMonth() + 1).padStart(2, '0')}`

async function partition(db: Kysely<any>, table: Table, now: Date): Promise<void> {
  const { name, key } = table
  const { rows } = await sql<{ oldest: Date | null }>`SELECT min(${sql.ref(key)}) AS oldest FROM ${sql.table(name)}`.execute(db)
  const oldest = rows[0]?.oldest ? new Date(rows[0].oldest) : now
  const until = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + MONTHS_AHEAD, 1))
  const staging = `${name}_partitioned`
  await sql.raw(`CREATE TABLE ${staging} (LIKE ${name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (${key})`).execute(db)
  for (const start of monthStarts(oldest < now ? oldest : now, until)) {
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1))
    await sql
      .raw(
        `CREATE TABLE ${partitionName(name, start)} PARTITION OF ${staging} FOR VALUES FROM ('${start.toISOString()}') TO ('${end.toISOString()}')`,
      )
      .execute(db)
  }
  await sql.raw(`CREATE TABLE ${name}_default PARTITION OF ${staging} DEFAULT`).execute(db)
  await sql.raw(`INSERT INTO ${staging} SELECT * FROM ${name}`).execute(db)
  await sql.raw(`DROP TABLE ${name}`).execute(db)
  await sql.raw(`ALTER TABLE ${staging} RENAME TO ${name}`).execute(db)
  for (const statement of table.keys) await sql.raw(statement).execute(db)
}

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE allocations DROP CONSTRAINT allocations_quote_id_fkey`.execute(db)
  await sql`ALTER TABLE sessions DROP CONSTRAINT sessions_quote_id_fkey`.execute(db)
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db)
  const now = new Date(rows[0]?.now ?? Date.now())
  for (const table of TABLES) await partition(db, table, now)
  // Allocated quotes of the months retention drops: read by id like the others (GET /quotes/:id, explain).
  await sql`CREATE TABLE retained_quotes (LIKE quotes INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`.execute(db)
  await sql`ALTER TABLE retained_quotes ADD CONSTRAINT retained_quotes_pkey PRIMARY KEY (id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const { name } of [...TABLES].reverse()) {
    const plain = `${name}_plain`
    await sql.raw(`CREATE TABLE ${plain} (LIKE ${name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`).execute(db)
    await sql.raw(`INSERT INTO ${plain} SELECT * FROM ${name}`).execute(db)
    if (name === 'quotes') await sql.raw(`INSERT INTO ${plain} SELECT * FROM retained_quotes ON CONFLICT DO NOTHING`).execute(db)
    await sql.raw(`DROP TABLE ${name}`).execute(db)
    await sql.raw(`ALTER TABLE ${plain} RENAME TO ${name}`).execute(db)
  }
  await sql`DROP TABLE retained_quotes`.execute(db)
  await sql`ALTER TABLE quotes ADD CONSTRAINT quotes_pkey PRIMARY KEY (id)`.execute(db)
  await sql`ALTER TABLE quotes ADD CONSTRAINT quotes_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)`.execute(
    db,
  )
  await sql`ALTER TABLE sessions ADD CONSTRAINT sessions_pkey PRIMARY KEY (id)`.execute(db)
  await sql`ALTER TABLE sessions ADD CONSTRAINT sessions_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)`.execute(
    db,
  )
  await sql`ALTER TABLE sessions ADD CONSTRAINT sessions_quote_id_fkey FOREIGN KEY (quote_id) REFERENCES quotes(id)`.execute(db)
  await sql`ALTER TABLE allocations ADD CONSTRAINT allocations_quote_id_fkey FOREIGN KEY (quote_id) REFERENCES quotes(id)`.execute(db)
  await sql`ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id)`.execute(db)
  await sql`CREATE INDEX webhook_attempts_delivery_id_idx ON webhook_attempts (delivery_id, attempted_at)`.execute(db)
  await sql`ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE`.execute(
    db,
  )
  await sql`ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_pkey PRIMARY KEY (id)`.execute(db)
  await sql`ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_id_key UNIQUE (allocation_id)`.execute(db)
  await sql`CREATE INDEX tax_receipts_pending_idx ON tax_receipts (next_attempt_at) WHERE status = 'pending'`.execute(db)
  await sql`ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_id_fkey FOREIGN KEY (allocation_id) REFERENCES allocations(id)`.execute(
    db,
  )
  await sql`ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)`.execute(
    db,
  )
}
