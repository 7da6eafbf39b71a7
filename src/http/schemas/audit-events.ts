// Wire schemas of the audit log (GET /v3/audit-events).
import { Type, type Static } from '@sinclair/typebox'
import { AUDIT_EVENT_TYPES } from '../../domain/audit.js'
import { nullable, stringEnum, UuidSchema } from './common.js'

export const AuditEventListQuerySchema = Type.Object(
  {
    organisationId: Type.Optional({ ...UuidSchema, description: "One organisation of the caller's tree (default: the whole tree)" }),
    type: Type.Optional(stringEnum(AUDIT_EVENT_TYPES, 'Only events of this type')),
    actorId: Type.Optional({ ...UuidSchema, description: 'Only events done by this user or API key (its id)' }),
    dateTimeFrom: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this time' })),
    dateTimeTo: Type.Optional(Type.String({ format: 'date-time', description: 'Events before this time' })),
    limit: Type.Optional(
      Type.String({
        pattern: '^(100|[1-9][0-9]?)$',
        errorMessage: { pattern: 'must be a whole number from 1 to 100' },
        description: 'Events per page, 1–100 (default 20)',
      }),
    ),
    startingAfter: Type.Optional({ ...UuidSchema, description: 'The last event of the previous page: the (older) page after it' }),
  },
  { additionalProperties: false },
)

export type AuditEventListQuery = Static<typeof AuditEventListQuerySchema>

export const AuditEventSchema = Type.Object(
  {
    id: UuidSchema,
    type: Type.String({ description: 'What happened, e.g. api_key.created, organisation.updated, user.signed_in' }),
    organisationId: UuidSchema,
    actor: Type.Object({
      type: Type.Union([Type.Literal('user'), Type.Literal('apiKey'), Type.Literal('operator')]),
      id: nullable(UuidSchema),
      label: Type.String({ description: "A user's e-mail address, an API key's prefix, or operator" }),
    }),
    ip: nullable(Type.String({ description: 'The client address (TRUST_PROXY honoured); null for an operator' })),
    createdAt: Type.String({ format: 'date-time' }),
    changes: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What changed, without secrets: { field: { from, to } } for updates, the new values for creations',
    }),
  },
  { title: 'AuditEvent' },
)

export type AuditEventResponse = Static<typeof AuditEventSchema>

export const AuditEventListSchema = Type.Object(
  { hasMore: Type.Boolean({ description: 'Older events follow' }), data: Type.Array(AuditEventSchema) },
  { title: 'AuditEventList' },
)
