// The audit log's vocabulary: the event types Canopy records, and the diff of a change (without secrets).

export const AUDIT_EVENT_TYPES = [
  'api_key.created',
  'api_key.rotated',
  'api_key.revoked',
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'webhook_endpoint.tested',
  'webhook_endpoint.recovered',
  'webhook_delivery.retried',
  'organisation.created',
  'organisation.updated',
  'organisation.deactivated',
  'organisation.reactivated',
  'user.invited',
  'user.role_changed',
  'user.removed',
  'user.password_set',
  'user.signed_in',
  'user.sign_in_failed',
  'user.signed_out',
  'user.signed_out_everywhere',
  'user.second_factor_enabled',
  'user.second_factor_disabled',
  'user.recovery_code_used',
  'user.recovery_codes_regenerated',
] as const
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number]

/** { field: { from, to } } for each field whose value differs (compared as JSON). */
export function changedFields<T extends object>(
  before: T,
  after: T,
  fields: readonly (keyof T & string)[],
): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {}
  for (const field of fields) {
    const from = before[field] ?? null
    const to = after[field] ?? null
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to }
  }
  return changes
}
