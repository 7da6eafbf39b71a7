// Webhook endpoints, their secrets, and the delivery outbox (events, deliveries, attempts). Events of allocations
// and reversals are written by the allocation statements themselves (subscriberDeliveries below).
import { sql, type Kysely, type OperationNodeSource, type RawBuilder } from 'kysely'
import type { Selectable } from 'kysely'
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../database.js'
import { runAgainOnDeadlock } from '../failures.js'

type DeliveryStatus = Selectable<WebhookDeliveriesTable>['status']

export interface WebhookEndpoint {
  id: string
  organisationId: string
  url: string
  description: string
  enabledEvents: string[]
  format: 'standard' | 'ekko'
  status: 'enabled' | 'disabled'
  disabledReason: string | null
  failingSince: Date | null
  createdAt: Date
  updatedAt: Date
}

/** A test event ready to be written: the exact bodies that will be signed and sent. */
export interface WebhookEventDraft {
  id: string
  organisationId: string
  type: string
  body: string
  /** The ekko-format body (null: ekko-format endpoints get `body`). */
  ekkoBody: string | null
  createdAt: Date
}

/**
 * The event of an allocation or a reversal, written with it: what its body is rendered from when its first delivery is
 * claimed (the record, by `sourceId`; the quote's footprint, which the ledger does not keep).
 */
export interface RecordEventDraft {
  id: string
  organisationId: string
  type: string
  /** The allocation's or the reversal's id. */
  sourceId: string
  /** The quote's footprint in grams CO2e, a decimal string (null: the quote had no carbon footprint). */
  quoteCo2eGrams: string | null
  createdAt: Date
}

export interface WebhookAttempt {
  id: string
  attemptedAt: Date
  durationMs: number
  statusCode: number | null
  error: string | null
  responseBody: string | null
}

export interface WebhookDelivery {
  id: string
  eventId: string
  eventType: string
  endpointId: string
  status: DeliveryStatus
  attemptCount: number
  nextAttemptAt: Date | null
  lastAttemptAt: Date | null
  createdAt: Date
}

const endpointFromRow = (row: Selectable<WebhookEndpointsTable>): WebhookEndpoint => ({
  id: row.id,
  organisationId: row.organisation_id,
  url: row.url,
  description: row.description,
  enabledEvents: row.enabled_events,
  format: row.format,
  status: row.status,
  disabledReason: row.disabled_reason,
  failingSince: row.failing_since,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

export async function insertEndpoint(
  db: Kysely<Database>,
  endpoint: WebhookEndpoint,
  secret: { id: string; secret: string },
): Promise<void> {
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: endpoint.id,
      organisation_id: endpoint.organisationId,
      url: endpoint.url,
      description: endpoint.description,
      enabled_events: endpoint.enabledEvents,
      format: endpoint.format,
      status: endpoint.status,
      created_at: endpoint.createdAt,
      updated_at: endpoint.updatedAt,
    })
    .execute()
  await db
    .insertInto('webhook_endpoint_secrets')
    .values({ id: secret.id, endpoint_id: endpoint.id, secret: secret.secret, created_at: endpoint.createdAt })
    .execute()
}

export async function findEndpoint(db: Kysely<Database>, id: string): Promise<WebhookEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
  return row && endpointFromRow(row)
}

export async function listEndpoints(db: Kysely<Database>, organisationIds: readonly string[]): Promise<WebhookEndpoint[]> {
  if (organisationIds.length === 0) return []
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organisation_id', 'in', organisationIds)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(endpointFromRow)
}

export interface EndpointChanges {
  url?: string | undefined
  description?: string | undefined
  enabledEvents?: string[] | undefined
  format?: 'standard' | 'ekko' | undefined
  status?: 'enabled' | 'disabled' | undefined
}

export async function updateEndpoint(db: Kysely<Database>, id: string, changes: EndpointChanges, now: Date): Promise<WebhookEndpoint> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.enabledEvents === undefined ? {} : { enabled_events: changes.enabledEvents }),
      ...(changes.format === undefined ? {} : { format: changes.format }),
      // Enabling starts afresh; disabling by hand says so.
      ...(changes.status === 'enabled' ? { status: 'enabled' as const, disabled_reason: null, failing_since: null } : {}),
      ...(changes.status === 'disabled' ? { status: 'disabled' as const, disabled_reason: 'disabled through the API' } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
  return endpointFromRow(row)
}

/** Deletes the endpoint with its secrets, deliveries and attempts (the events stay, for other endpoints). */
export async function deleteEndpoint(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute()
}

/** The secrets that sign now: the current one and any rotated one still in its grace period, newest first. */
export async function activeSecrets(
  db: Kysely<Database>,
  endpointId: string,
  now: Date,
): Promise<{ secret: string; expiresAt: Date | null }[]> {
  const rows = await db
    .selectFrom('webhook_endpoint_secrets')
    .select(['secret', 'expires_at'])
    .where('endpoint_id', '=', endpointId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
  return rows.map((r) => ({ secret: r.secret, expiresAt: r.expires_at }))
}

/** The current secret keeps signing until `graceUntil`; `secret` signs from now on. */
export async function rotateSecret(
  db: Kysely<Database>,
  endpointId: string,
  secret: { id: string; secret: string },
  now: Date,
  graceUntil: Date,
): Promise<void> {
  await db
    .updateTable('webhook_endpoint_secrets')
    .set({ expires_at: graceUntil })
    .where('endpoint_id', '=', endpointId)
    .where('expires_at', 'is', null)
    .execute()
  // Secrets already past their grace are of no use any more.
  await db.deleteFrom('webhook_endpoint_secrets').where('endpoint_id', '=', endpointId).where('expires_at', '<=', now).execute()
  await db
    .insertInto('webhook_endpoint_secrets')
    .values({ id: secret.id, endpoint_id: endpointId, secret: secret.secret, created_at: now })
    .execute()
}

const draftRow = (e: RecordEventDraft) =>
  sql`(${e.id}::uuid, ${e.sourceId}::uuid, ${e.organisationId}::uuid, ${e.type}::text, ${e.quoteCo2eGrams}::numeric, ${e.createdAt}::timestamptz)`

/**
 * The CTEs that write events and their deliveries in the statement that writes their source rows. `written`
 * names a CTE returning the ids of the source rows actually written (allocations or reversals): an event is
 * written only with its source row, so a replay or a conflict writes none. Each event gets one delivery per
 * enabled endpoint of its organisation or of an ancestor that subscribes to its type, and an event no endpoint
 * subscribes to is not written at all: the record itself is the log, and nobody would be sent it. Must follow
 * `WITH RECURSIVE`. Raw SQL: data-modifying CTEs over a VALUES list and a recursive walk up the tree.
 */
export function eventCtes(written: string, events: readonly RecordEventDraft[]): RawBuilder<unknown> {
  return sql`
    event_drafts (id, source_id, organisation_id, type, quote_co2e_grams, created_at) AS (
      VALUES ${sql.join(events.map(draftRow))}
    ),${sql.raw(eventWritesText(written))}`
}

/**
 * The CTEs of eventCtes after `event_drafts` (id, source_id, organisation_id, type, quote_co2e_grams, created_at), which
 * the caller defines: plain text without parameters, for a statement written once (allocations.ts). The walk up the tree
 * looks each parent up by its id (LATERAL … OFFSET 0, which the planner cannot flatten into a join): a plan kept for any
 * number of events, planned for a guess of a hundred, would otherwise hash the whole organisations table in every
 * statement. Endpoints are few (only organisations that have some), and joined.
 */
export const eventWritesText = (written: string): string => `
    event_ancestry (organisation_id, ancestor_id) AS (
      SELECT organisation_id, organisation_id FROM event_drafts
      UNION
      SELECT a.organisation_id, o.parent_id FROM event_ancestry a
      CROSS JOIN LATERAL (SELECT parent_id FROM organisations WHERE id = a.ancestor_id AND parent_id IS NOT NULL OFFSET 0) o
    ),
    event_targets AS (
      SELECT d.id AS event_id, ep.id AS endpoint_id, d.created_at
      FROM event_drafts d
      JOIN "${written}" w ON w.id = d.source_id
      JOIN event_ancestry a ON a.organisation_id = d.organisation_id
      JOIN webhook_endpoints ep ON ep.organisation_id = a.ancestor_id
      WHERE ep.status = 'enabled' AND ep.enabled_events && ARRAY['*', d.type]
    ),
    written_events AS (
      INSERT INTO webhook_events (id, organisation_id, type, source_id, quote_co2e_grams, created_at)
      SELECT d.id, d.organisation_id, d.type, d.source_id, d.quote_co2e_grams, d.created_at
      FROM event_drafts d WHERE d.id IN (SELECT event_id FROM event_targets)
      RETURNING id
    ),
    written_deliveries AS (
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, next_attempt_at, created_at)
      SELECT gen_random_uuid(), t.event_id, t.endpoint_id, t.created_at, t.created_at
      FROM event_targets t JOIN written_events e ON e.id = t.event_id
      RETURNING id
    )`

/**
 * Runs `insert` (an INSERT … RETURNING id of the events' source rows) with the events and their deliveries in the
 * same statement; returns the ids `insert` wrote. Each event names the id of its source row.
 */
export async function insertWithEvents(
  db: Kysely<Database>,
  insert: OperationNodeSource | { ctes: RawBuilder<unknown> },
  events: readonly RecordEventDraft[],
  alsoWith?: RawBuilder<unknown>,
): Promise<string[]> {
  const extra = alsoWith ? sql`${alsoWith},` : sql``
  // Either an INSERT (it becomes `written`) or CTEs of the caller's that end with one named `written`.
  const writes = 'ctes' in insert ? insert.ctes : sql`written AS (${insert})`
  const statement = sql<{ id: string }>`
    WITH RECURSIVE ${writes}, ${extra}
    ${eventCtes('written', events)}
    SELECT id FROM written`
  const { rows } = await runAgainOnDeadlock(db.isTransaction, () => statement.execute(db))
  return rows.map((r) => r.id)
}

/** A test event for one endpoint, delivered to it alone. */
export async function insertTestEvent(
  db: Kysely<Database>,
  event: WebhookEventDraft,
  endpointId: string,
  deliveryId: string,
): Promise<void> {
  await db
    .insertInto('webhook_events')
    .values({
      id: event.id,
      organisation_id: event.organisationId,
      type: event.type,
      body: event.body,
      ekko_body: event.ekkoBody,
      created_at: event.createdAt,
    })
    .execute()
  await db
    .insertInto('webhook_deliveries')
    .values({ id: deliveryId, event_id: event.id, endpoint_id: endpointId, next_attempt_at: event.createdAt, created_at: event.createdAt })
    .execute()
}

export interface ClaimedDelivery {
  id: string
  eventId: string
  eventType: string
  endpointId: string
  organisationId: string
  /** This attempt's number (1 = the first). */
  attempt: number
  manual: boolean
  url: string
  format: 'standard' | 'ekko'
  /**
   * The bytes this delivery sends: stored on it once rendered in this endpoint's format, or the event's own body for
   * that format (ekko's when there is one, else the standard body); null while a record's event has no body in that
   * format yet (`toRender`).
   */
  body: string | null
  /** What a record's event is rendered from; null for an event that carries its body. */
  toRender: { sourceId: string; quoteCo2eGrams: string | null } | null
  /** The secrets that sign it, newest first. */
  secrets: string[]
}

/**
 * Claims up to `limit` due deliveries of enabled endpoints that no other worker holds, leasing them until
 * `leaseUntil` and counting the attempt. SKIP LOCKED lets every API process share the queue; a worker that
 * dies mid-request leaves a lease that expires, and the delivery is attempted again (at least once).
 * Raw SQL: FOR UPDATE OF … SKIP LOCKED inside an UPDATE's subquery, with the claimed rows' context in the same trip.
 */
export async function claimDueDeliveries(db: Kysely<Database>, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<{
    id: string
    event_id: string
    endpoint_id: string
    attempts: number
    manual: boolean
    type: string
    organisation_id: string
    body: string | null
    source_id: string | null
    quote_co2e_grams: string | null
    url: string
    format: 'standard' | 'ekko'
    secrets: string[]
  }>`
    WITH claimed AS (
      UPDATE webhook_deliveries SET locked_until = ${leaseUntil}, attempts = attempts + 1
      WHERE id IN (
        SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints ep ON ep.id = d.endpoint_id AND ep.status = 'enabled'
        WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND (d.locked_until IS NULL OR d.locked_until <= ${now})
        ORDER BY d.next_attempt_at
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED
      )
      RETURNING id, event_id, endpoint_id, attempts, manual, body, body_format, created_at
    )
    SELECT c.id, c.event_id, c.endpoint_id, c.attempts, c.manual, e.type, e.organisation_id, ep.url, ep.format,
      CASE WHEN c.body_format = ep.format THEN c.body
           WHEN ep.format = 'ekko' AND e.ekko_body IS NOT NULL THEN e.ekko_body ELSE e.body END AS body,
      e.source_id, e.quote_co2e_grams,
      ARRAY(
        SELECT s.secret FROM webhook_endpoint_secrets s
        WHERE s.endpoint_id = ep.id AND (s.expires_at IS NULL OR s.expires_at > ${now})
        ORDER BY s.created_at DESC, s.id DESC
      ) AS secrets
    FROM claimed c JOIN webhook_events e ON e.id = c.event_id AND e.created_at = c.created_at JOIN webhook_endpoints ep ON ep.id = c.endpoint_id
    ORDER BY e.created_at, e.id`.execute(db)
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    endpointId: r.endpoint_id,
    organisationId: r.organisation_id,
    attempt: r.attempts,
    manual: r.manual,
    url: r.url,
    format: r.format,
    body: r.body,
    toRender: r.body === null && r.source_id !== null ? { sourceId: r.source_id, quoteCo2eGrams: r.quote_co2e_grams } : null,
    secrets: r.secrets,
  }))
}

/**
 * Stores each delivery's rendered body unless one in that format is stored already, and returns the stored ones: the
 * bytes every later attempt sends. Raw SQL: UPDATE … FROM a VALUES list.
 */
export async function storeDeliveryBodies(
  db: Kysely<Database>,
  bodies: readonly { deliveryId: string; format: 'standard' | 'ekko'; body: string }[],
): Promise<Map<string, string>> {
  if (bodies.length === 0) return new Map()
  const rows = bodies.map(({ deliveryId, format, body }) => sql`(${deliveryId}::uuid, ${format}::text, ${body}::text)`)
  const result = await sql<{ id: string; body: string }>`
    UPDATE webhook_deliveries d
    SET body = CASE WHEN d.body_format = r.format THEN d.body ELSE r.body END, body_format = r.format
    FROM (VALUES ${sql.join(rows)}) AS r (id, format, body)
    WHERE d.id = r.id
    RETURNING d.id, d.body`.execute(db)
  return new Map(result.rows.map((r) => [r.id, r.body]))
}

/** Gives claimed deliveries back (not attempted after all): due again at once, the claim not counted. */
export async function releaseDeliveries(db: Kysely<Database>, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ locked_until: null, attempts: eb('attempts', '-', 1) }))
    .where('id', 'in', ids)
    .execute()
}

export async function insertAttempt(db: Kysely<Database>, deliveryId: string, attempt: WebhookAttempt): Promise<void> {
  await db
    .insertInto('webhook_attempts')
    .values({
      id: attempt.id,
      delivery_id: deliveryId,
      attempted_at: attempt.attemptedAt,
      duration_ms: attempt.durationMs,
      status_code: attempt.statusCode,
      error: attempt.error,
      response_body: attempt.responseBody,
    })
    .execute()
}

/**
 * Records successful attempts of several deliveries in one statement (the common case, kept cheap under load):
 * each attempt row, its delivery succeeded, and its endpoint's failing streak ended. Raw SQL: UPDATE … FROM
 * a VALUES list, with data-modifying CTEs.
 */
export async function recordSuccesses(
  db: Kysely<Database>,
  items: readonly { deliveryId: string; endpointId: string; attempt: WebhookAttempt }[],
): Promise<void> {
  if (items.length === 0) return
  const rows = items.map(
    ({ deliveryId, endpointId, attempt: a }) =>
      sql`(${a.id}::uuid, ${deliveryId}::uuid, ${endpointId}::uuid, ${a.attemptedAt}::timestamptz, ${a.durationMs}::integer, ${a.statusCode}::integer, ${a.responseBody}::text)`,
  )
  await sql`
    WITH results (attempt_id, delivery_id, endpoint_id, attempted_at, duration_ms, status_code, response_body) AS (
      VALUES ${sql.join(rows)}
    ),
    settled AS (
      UPDATE webhook_deliveries d SET status = 'succeeded', locked_until = NULL, last_attempt_at = r.attempted_at, manual = false
      FROM results r WHERE d.id = r.delivery_id
      RETURNING d.id
    ),
    recorded AS (
      INSERT INTO webhook_attempts (id, delivery_id, attempted_at, duration_ms, status_code, response_body)
      SELECT r.attempt_id, r.delivery_id, r.attempted_at, r.duration_ms, r.status_code, r.response_body
      FROM results r JOIN settled s ON s.id = r.delivery_id
    )
    UPDATE webhook_endpoints SET failing_since = NULL
    WHERE id IN (SELECT endpoint_id FROM results) AND failing_since IS NOT NULL`.execute(db)
}

/** After an attempt: succeeded, failed for good, or pending again at `retryAt`. The lease is released. */
export async function settleDelivery(
  db: Kysely<Database>,
  id: string,
  now: Date,
  next: { status: 'succeeded' | 'failed' } | { status: 'pending'; retryAt: Date },
): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: next.status,
      locked_until: null,
      last_attempt_at: now,
      manual: false,
      ...(next.status === 'pending' ? { next_attempt_at: next.retryAt } : {}),
    })
    .where('id', '=', id)
    .execute()
}

/** A success ends the endpoint's failing streak. */
export async function markEndpointHealthy(db: Kysely<Database>, endpointId: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: null })
    .where('id', '=', endpointId)
    .where('failing_since', 'is not', null)
    .execute()
}

/** Starts the endpoint's failing streak (if none); returns when it started. */
export async function markEndpointFailing(db: Kysely<Database>, endpointId: string, now: Date): Promise<Date | null> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({ failing_since: eb.fn.coalesce('failing_since', sql<Date>`${now}::timestamptz`) }))
    .where('id', '=', endpointId)
    .returning('failing_since')
    .executeTakeFirst()
  return row?.failing_since ?? null
}

/** Disables the endpoint and fails its pending deliveries (POST …/recover brings them back once it is enabled). */
export async function disableEndpoint(db: Kysely<Database>, endpointId: string, reason: string, now: Date): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now })
    .where('id', '=', endpointId)
    .execute()
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', locked_until: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'pending')
    .execute()
}

const deliveryColumns = [
  'd.id',
  'd.event_id',
  'd.endpoint_id',
  'd.status',
  'd.attempts',
  'd.next_attempt_at',
  'd.last_attempt_at',
  'd.created_at',
  'e.type',
] as const

const deliveryFromRow = (r: {
  id: string
  event_id: string
  endpoint_id: string
  status: DeliveryStatus
  attempts: number
  next_attempt_at: Date
  last_attempt_at: Date | null
  created_at: Date
  type: string
}): WebhookDelivery => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.type,
  endpointId: r.endpoint_id,
  status: r.status,
  attemptCount: r.attempts,
  nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
  lastAttemptAt: r.last_attempt_at,
  createdAt: r.created_at,
})

/** An endpoint's deliveries, newest first, `limit + 1` rows at most (the extra one says there are more). */
export async function listDeliveries(
  db: Kysely<Database>,
  endpointId: string,
  options: { status?: DeliveryStatus | undefined; limit: number; before?: { createdAt: Date; id: string } | undefined },
): Promise<WebhookDelivery[]> {
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', (join) => join.onRef('e.id', '=', 'd.event_id').onRef('e.created_at', '=', 'd.created_at'))
    .select(deliveryColumns)
    .where('d.endpoint_id', '=', endpointId)
  if (options.status) query = query.where('d.status', '=', options.status)
  if (options.before) {
    const { createdAt, id } = options.before
    query = query.where((eb) => eb(eb.refTuple('d.created_at', 'd.id'), '<', eb.tuple(createdAt, id)))
  }
  const rows = await query
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(options.limit + 1)
    .execute()
  return rows.map(deliveryFromRow)
}

export async function findDelivery(db: Kysely<Database>, id: string): Promise<WebhookDelivery | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', (join) => join.onRef('e.id', '=', 'd.event_id').onRef('e.created_at', '=', 'd.created_at'))
    .select(deliveryColumns)
    .where('d.id', '=', id)
    .executeTakeFirst()
  return row && deliveryFromRow(row)
}

/** Attempts of several deliveries, oldest first, grouped by delivery id. */
export async function attemptsOf(db: Kysely<Database>, deliveryIds: readonly string[]): Promise<Map<string, WebhookAttempt[]>> {
  const byDelivery = new Map<string, WebhookAttempt[]>(deliveryIds.map((id) => [id, []]))
  if (deliveryIds.length === 0) return byDelivery
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('attempted_at')
    .orderBy('id')
    .execute()
  for (const r of rows) {
    byDelivery.get(r.delivery_id)?.push({
      id: r.id,
      attemptedAt: r.attempted_at,
      durationMs: r.duration_ms,
      statusCode: r.status_code,
      error: r.error,
      responseBody: r.response_body,
    })
  }
  return byDelivery
}

/** A manual retry: one attempt now, never rescheduled if it fails. A delivery already pending is simply due now. */
export async function retryDeliveryNow(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      manual: eb.case().when('status', '=', 'pending').then(eb.ref('manual')).else(true).end(),
      status: 'pending',
      next_attempt_at: now,
    }))
    .where('id', '=', id)
    .execute()
}

/** Every failed delivery of the endpoint created since `since` starts its schedule again now; returns how many. */
export async function recoverDeliveries(db: Kysely<Database>, endpointId: string, since: Date, now: Date): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', attempts: 0, manual: false, next_attempt_at: now, locked_until: null })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'failed')
    .where('created_at', '>=', since)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** How many deliveries wait, and since when the oldest has waited (for metrics). */
export async function pendingDeliveryStats(db: Kysely<Database>): Promise<{ pending: number; oldestPendingAt: Date | null }> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => [eb.fn.countAll<string>().as('pending'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow()
  return { pending: Number(row.pending), oldestPendingAt: row.oldest ? new Date(row.oldest) : null }
}
