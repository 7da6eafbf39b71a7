// The audit log: appended to, never changed (the database refuses UPDATE, DELETE and TRUNCATE of audit_events).
import type { Kysely } from 'kysely'
import type { AuditEventsTable, Database } from '../database.js'

export type AuditActorType = AuditEventsTable['actor_type']

export interface AuditEvent {
  id: string
  organisationId: string
  type: string
  actor: { type: AuditActorType; id: string | null; label: string }
  ip: string | null
  /** What changed, without secrets: { field: { from, to } } for updates, the new values for creations. */
  changes: Record<string, unknown>
  createdAt: Date
}

export async function insertAuditEvents(db: Kysely<Database>, events: readonly AuditEvent[]): Promise<void> {
  if (events.length === 0) return
  await db
    .insertInto('audit_events')
    .values(
      events.map((event) => ({
        id: event.id,
        organisation_id: event.organisationId,
        type: event.type,
        actor_type: event.actor.type,
        actor_id: event.actor.id,
        actor_label: event.actor.label.slice(0, 320),
        ip: event.ip === null ? null : event.ip.slice(0, 64),
        changes: JSON.stringify(event.changes),
        created_at: event.createdAt,
      })),
    )
    .execute()
}

export interface AuditEventFilter {
  organisationIds: readonly string[]
  type?: string | undefined
  actorId?: string | undefined
  from?: Date | undefined
  to?: Date | undefined
  /** Events strictly older than this one (newest first). */
  after?: { createdAt: Date; id: string } | undefined
  limit: number
}

/** A page of events, newest first (keyset on created_at, id). */
export async function findAuditEvents(db: Kysely<Database>, filter: AuditEventFilter): Promise<AuditEvent[]> {
  if (filter.organisationIds.length === 0) return []
  let query = db.selectFrom('audit_events').selectAll().where('organisation_id', 'in', filter.organisationIds)
  if (filter.type !== undefined) query = query.where('type', '=', filter.type)
  if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId)
  if (filter.from !== undefined) query = query.where('created_at', '>=', filter.from)
  if (filter.to !== undefined) query = query.where('created_at', '<', filter.to)
  const after = filter.after
  if (after !== undefined) {
    query = query.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.createdAt, after.id)))
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
  return rows.map((row) => ({
    id: row.id,
    organisationId: row.organisation_id,
    type: row.type,
    actor: { type: row.actor_type, id: row.actor_id, label: row.actor_label },
    ip: row.ip,
    changes: row.changes,
    createdAt: row.created_at,
  }))
}

export async function findAuditEventPosition(
  db: Kysely<Database>,
  id: string,
): Promise<{ organisationId: string; createdAt: Date; id: string } | undefined> {
  const row = await db.selectFrom('audit_events').select(['id', 'organisation_id', 'created_at']).where('id', '=', id).executeTakeFirst()
  return row && { id: row.id, organisationId: row.organisation_id, createdAt: row.created_at }
}
