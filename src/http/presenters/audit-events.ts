// Audit event → wire.
import type { AuditEvent } from '../../services/audit.js'
import type { AuditEventResponse } from '../schemas/audit-events.js'

export const presentAuditEvent = (event: AuditEvent): AuditEventResponse => ({
  id: event.id,
  type: event.type,
  organisationId: event.organisationId,
  actor: { type: event.actor.type, id: event.actor.id, label: event.actor.label },
  ip: event.ip,
  createdAt: event.createdAt.toISOString(),
  changes: event.changes,
})
