// The audit log (append-only): every change to keys, webhooks, origins, the IP allowlist, users and organisations,
// and sign-ins, written in the same transaction as the change it records; read by admins and API keys.
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { findAuditEventPosition, findAuditEvents, insertAuditEvents, type AuditEvent } from '../db/repositories/audit-events.js'
import type { AuditEventType } from '../domain/audit.js'
import { AppError } from '../errors.js'
import { newId } from '../ids.js'
import type { AccessResolver, Actor, Principal } from './access.js'

export type { AuditEvent }

export interface AuditEntry {
  type: AuditEventType
  organisationId: string
  changes?: Record<string, unknown>
}

/** The actor as the log shows it: a user's e-mail, a key's prefix, "operator". */
const loggedActor = (actor: Actor): AuditEvent['actor'] => ({ type: actor.type, id: actor.id, label: actor.label })

/** Appends events done by `by` at `now` (in the caller's transaction, when it passes one). */
export async function recordAudit(
  db: Kysely<Database>,
  by: Pick<Principal, 'actor' | 'ip'>,
  entries: readonly AuditEntry[],
  now: Date,
): Promise<void> {
  await insertAuditEvents(
    db,
    entries.map((entry) => ({
      id: newId(),
      organisationId: entry.organisationId,
      type: entry.type,
      actor: loggedActor(by.actor),
      ip: by.ip,
      changes: entry.changes ?? {},
      createdAt: now,
    })),
  )
}

export interface AuditEventQuery {
  organisationId?: string | undefined
  type?: AuditEventType | undefined
  actorId?: string | undefined
  dateTimeFrom?: string | undefined
  dateTimeTo?: string | undefined
  limit: number
  startingAfter?: string | undefined
}

export interface AuditDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
}

/**
 * Events of one organisation of the caller's tree, or of the whole tree (active organisations), newest first, in
 * keyset pages: `startingAfter` is the last event of the previous page.
 */
export async function listAuditEvents(
  deps: AuditDeps,
  principal: Principal,
  query: AuditEventQuery,
): Promise<{ hasMore: boolean; data: AuditEvent[] }> {
  if (query.organisationId !== undefined) await deps.access.assertCanActOn(principal, query.organisationId, '/organisationId')
  const organisationIds =
    query.organisationId !== undefined ? [query.organisationId] : [...(await deps.access.treeOf(principal)).organisationIds]
  const from = query.dateTimeFrom === undefined ? undefined : new Date(query.dateTimeFrom)
  const to = query.dateTimeTo === undefined ? undefined : new Date(query.dateTimeTo)
  if (from && to && from >= to) {
    throw new AppError('INVALID_DATE_RANGE', 'dateTimeFrom must be before dateTimeTo', [
      { path: '/dateTimeFrom', message: 'must be before dateTimeTo' },
    ])
  }
  let after: { createdAt: Date; id: string } | undefined
  if (query.startingAfter !== undefined) {
    const position = await findAuditEventPosition(deps.db, query.startingAfter)
    if (!position || !(await deps.access.canSee(principal, position.organisationId))) {
      throw new AppError('INVALID_CURSOR', 'startingAfter is not an audit event of your organisation tree', [
        { path: '/startingAfter', message: 'is not an audit event you can see' },
      ])
    }
    after = position
  }
  const rows = await findAuditEvents(deps.db, {
    organisationIds,
    type: query.type,
    actorId: query.actorId,
    from,
    to,
    after,
    limit: query.limit + 1,
  })
  return { hasMore: rows.length > query.limit, data: rows.slice(0, query.limit) }
}
