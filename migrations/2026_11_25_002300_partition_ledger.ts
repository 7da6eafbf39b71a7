import { sql, type Kysely } from 'kysely'

// Frozen: never edit after it has landed; add a new migration instead.
// The ledger — allocations, reversals, their partner rows, webhook events and deliveries — becomes partitioned by month
// like the history before it (docs/partitioning.md). These months are never dropped (reconciliation, statements and the
// audit trail read them forever); partitions keep each month's indexes small and let a window's reads prune months.
//
// A unique key of a partitioned table must hold its partition column, so:
// - idempotency moves to allocation_idempotency_keys (not partitioned): (organisation, key) is its primary key, so a
//   retry is one index lookup that names its allocation's (id, created_at), whatever the number of months;
// - a partner row holds its allocation's created_at, so that its join to the allocation reads one partition;
// - a reversal is partitioned by its own time (a window of records reads the reversals made in it) and names its
//   allocation's partition row (allocation_created_at) for its foreign key; "one reversal per allocation" moves to
//   allocation_reversal_keys (not partitioned), whose primary key is the allocation;
// - a tax receipt and a delivery are written at their allocation's / event's instant, so (allocation_id, created_at) and
//   (event_id, created_at) name their parent row;
// - webhook attempts lose their foreign key into deliveries (attempts are partitioned by attempt time and written only
//   for a delivery the worker holds; they go with retention).
// Rows of the ledger that land in a default partition stay there (keys reference them; maintenance does not move them).

interface Table {
  name: string
  key: string
  /** What follows the copy: the table's keys, indexes and foreign keys. */
  keys: string[]
}

const TABLES: Table[] = [
  {
    name: 'allocations',
    key: 'created_at',
    keys: [
      'ALTER TABLE allocations ADD CONSTRAINT allocations_pkey PRIMARY KEY (id, created_at)',
      'CREATE INDEX allocations_root_time_idx ON allocations (root_organisation_id, created_at, id)',
      'CREATE INDEX allocations_organisation_time_idx ON allocations (organisation_id, created_at, id)',
      'CREATE INDEX allocations_consumer_time_idx ON allocations (root_organisation_id, consumer_reference, created_at, id)',
      'CREATE INDEX allocations_quote_id_idx ON allocations (quote_id)',
      'ALTER TABLE allocations ADD CONSTRAINT allocations_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    ],
  },
  {
    name: 'allocation_reversals',
    key: 'created_at',
    keys: [
      'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_pkey PRIMARY KEY (id, created_at)',
      'CREATE INDEX allocation_reversals_root_time_idx ON allocation_reversals (root_organisation_id, created_at, id)',
      'CREATE INDEX allocation_reversals_organisation_time_idx ON allocation_reversals (organisation_id, created_at, id)',
      'CREATE INDEX allocation_reversals_consumer_time_idx ON allocation_reversals (root_organisation_id, consumer_reference, created_at, id)',
      'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_allocation_fkey FOREIGN KEY (allocation_id, allocation_created_at) REFERENCES allocations (id, created_at)',
      'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    ],
  },
  {
    name: 'impact_record_partners',
    key: 'funds_date_time',
    keys: [
      'ALTER TABLE impact_record_partners ADD CONSTRAINT impact_record_partners_pkey PRIMARY KEY (impact_partner_id, root_organisation_id, funds_date_time, record_id) INCLUDE (organisation_id, allocation_id, allocation_created_at)',
    ],
  },
  {
    name: 'webhook_events',
    key: 'created_at',
    keys: [
      'ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id, created_at)',
      'CREATE INDEX webhook_events_source_id_idx ON webhook_events (source_id)',
      'ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    ],
  },
  {
    name: 'webhook_deliveries',
    key: 'created_at',
    keys: [
      'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, created_at)',
      // A delivery is written with its event, at its event's instant: unique per (event, endpoint) as before.
      'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id, created_at)',
      "CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
      'CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at, id)',
      'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE',
      'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_fkey FOREIGN KEY (event_id, created_at) REFERENCES webhook_events (id, created_at)',
    ],
  },
]

const MONTHS_AHEAD = 3

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
  // The view over allocations' entries depends on the table: kept as it is, made again over the partitioned table.
  const { rows: view } = await sql<{ definition: string }>`SELECT pg_get_viewdef('allocation_entries'::regclass) AS definition`.execute(db)
  await sql`DROP VIEW allocation_entries`.execute(db)
  for (const statement of [
    'ALTER TABLE allocation_reversals DROP CONSTRAINT allocation_reversals_allocation_id_fkey',
    'ALTER TABLE tax_receipts DROP CONSTRAINT tax_receipts_allocation_id_fkey',
    'ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey',
    'ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey',
    'ALTER TABLE allocation_reversals ADD COLUMN allocation_created_at timestamptz',
    'UPDATE allocation_reversals r SET allocation_created_at = a.created_at FROM allocations a WHERE a.id = r.allocation_id',
    'ALTER TABLE allocation_reversals ALTER COLUMN allocation_created_at SET NOT NULL',
    // A partner row names its allocation's partition row too (a page led by a partner joins its few rows to them).
    'ALTER TABLE impact_record_partners ADD COLUMN allocation_created_at timestamptz',
    'UPDATE impact_record_partners p SET allocation_created_at = a.created_at FROM allocations a WHERE a.id = p.allocation_id',
    'ALTER TABLE impact_record_partners ALTER COLUMN allocation_created_at SET NOT NULL',
  ]) {
    await sql.raw(statement).execute(db)
  }
  // Idempotency: one row per (organisation, key), naming its allocation's partition row. Kept as long as allocations.
  await sql`
    CREATE TABLE allocation_idempotency_keys (
      organisation_id uuid NOT NULL,
      idempotency_key text NOT NULL,
      allocation_id uuid NOT NULL,
      allocation_created_at timestamptz NOT NULL,
      CONSTRAINT allocation_idempotency_keys_pkey PRIMARY KEY (organisation_id, idempotency_key)
    )`.execute(db)
  await sql`
    INSERT INTO allocation_idempotency_keys (organisation_id, idempotency_key, allocation_id, allocation_created_at)
    SELECT organisation_id, idempotency_key, id, created_at FROM allocations`.execute(db)
  // One reversal per allocation, kept as long as the ledger.
  await sql`
    CREATE TABLE allocation_reversal_keys (
      allocation_id uuid NOT NULL,
      reversal_id uuid NOT NULL,
      reversal_created_at timestamptz NOT NULL,
      CONSTRAINT allocation_reversal_keys_pkey PRIMARY KEY (allocation_id)
    )`.execute(db)
  await sql`
    INSERT INTO allocation_reversal_keys (allocation_id, reversal_id, reversal_created_at)
    SELECT allocation_id, id, created_at FROM allocation_reversals`.execute(db)
  const { rows } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db)
  const now = new Date(rows[0]?.now ?? Date.now())
  for (const table of TABLES) await partition(db, table, now)
  for (const statement of [
    'ALTER TABLE allocation_idempotency_keys ADD CONSTRAINT allocation_idempotency_keys_allocation_fkey FOREIGN KEY (allocation_id, allocation_created_at) REFERENCES allocations (id, created_at)',
    'ALTER TABLE allocation_reversal_keys ADD CONSTRAINT allocation_reversal_keys_reversal_fkey FOREIGN KEY (reversal_id, reversal_created_at) REFERENCES allocation_reversals (id, created_at)',
    // A receipt is written in its allocation's statement, at its allocation's instant.
    'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_fkey FOREIGN KEY (allocation_id, created_at) REFERENCES allocations (id, created_at)',
  ]) {
    await sql.raw(statement).execute(db)
  }
  await sql.raw(`CREATE VIEW allocation_entries AS ${view[0]?.definition ?? ''}`).execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  const { rows: view } = await sql<{ definition: string }>`SELECT pg_get_viewdef('allocation_entries'::regclass) AS definition`.execute(db)
  await sql`DROP VIEW allocation_entries`.execute(db)
  await sql`DROP TABLE allocation_idempotency_keys`.execute(db)
  await sql`DROP TABLE allocation_reversal_keys`.execute(db)
  await sql`ALTER TABLE tax_receipts DROP CONSTRAINT tax_receipts_allocation_fkey`.execute(db)
  await sql`ALTER TABLE allocation_reversals DROP CONSTRAINT allocation_reversals_allocation_fkey`.execute(db)
  await sql`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_fkey`.execute(db)
  for (const { name } of [...TABLES].reverse()) {
    const plain = `${name}_plain`
    await sql.raw(`CREATE TABLE ${plain} (LIKE ${name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`).execute(db)
    await sql.raw(`INSERT INTO ${plain} SELECT * FROM ${name}`).execute(db)
    await sql.raw(`DROP TABLE ${name}`).execute(db)
    await sql.raw(`ALTER TABLE ${plain} RENAME TO ${name}`).execute(db)
  }
  await sql`ALTER TABLE allocation_reversals DROP COLUMN allocation_created_at`.execute(db)
  await sql`ALTER TABLE impact_record_partners DROP COLUMN allocation_created_at`.execute(db)
  for (const statement of [
    'ALTER TABLE allocations ADD CONSTRAINT allocations_pkey PRIMARY KEY (id)',
    'ALTER TABLE allocations ADD CONSTRAINT allocations_organisation_idempotency_key_unique UNIQUE (organisation_id, idempotency_key)',
    'CREATE INDEX allocations_root_time_idx ON allocations (root_organisation_id, created_at, id)',
    'CREATE INDEX allocations_organisation_time_idx ON allocations (organisation_id, created_at, id)',
    'CREATE INDEX allocations_consumer_time_idx ON allocations (root_organisation_id, consumer_reference, created_at, id)',
    'CREATE INDEX allocations_quote_id_idx ON allocations (quote_id)',
    'ALTER TABLE allocations ADD CONSTRAINT allocations_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_pkey PRIMARY KEY (id)',
    'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_allocation_id_key UNIQUE (allocation_id)',
    'CREATE INDEX allocation_reversals_root_time_idx ON allocation_reversals (root_organisation_id, created_at, id)',
    'CREATE INDEX allocation_reversals_organisation_time_idx ON allocation_reversals (organisation_id, created_at, id)',
    'CREATE INDEX allocation_reversals_consumer_time_idx ON allocation_reversals (root_organisation_id, consumer_reference, created_at, id)',
    'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_allocation_id_fkey FOREIGN KEY (allocation_id) REFERENCES allocations(id)',
    'ALTER TABLE allocation_reversals ADD CONSTRAINT allocation_reversals_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    'ALTER TABLE impact_record_partners ADD CONSTRAINT impact_record_partners_pkey PRIMARY KEY (impact_partner_id, root_organisation_id, funds_date_time, record_id) INCLUDE (organisation_id, allocation_id)',
    'ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id)',
    'CREATE INDEX webhook_events_source_id_idx ON webhook_events (source_id)',
    'ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_organisation_id_fkey FOREIGN KEY (organisation_id) REFERENCES organisations(id)',
    'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id)',
    'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id)',
    "CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'",
    'CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at, id)',
    'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE',
    'ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES webhook_events(id)',
    'ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE',
    'ALTER TABLE tax_receipts ADD CONSTRAINT tax_receipts_allocation_id_fkey FOREIGN KEY (allocation_id) REFERENCES allocations(id)',
  ]) {
    await sql.raw(statement).execute(db)
  }
  await sql.raw(`CREATE VIEW allocation_entries AS ${view[0]?.definition ?? ''}`).execute(db)
}
