import { Type, type Static } from '@sinclair/typebox'
import { UuidSchema } from './common.js'
import { ImpactRecordSchema } from './reconciliation.js'

export const EquivalentsQuerySchema = Type.Object(
  {
    tonnes: Type.String({
      pattern: '^(0|[1-9][0-9]{0,8})(\\.[0-9]{1,6})?$',
      errorMessage: { pattern: 'must be a number of tonnes from 0 to 999999999.999999, with at most 6 decimals' },
      description: 'Tonnes of CO₂e (a decimal, at most 6 decimals)',
    }),
    locale: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: 'A BCP 47 tag; resolved as a quote resolves it' })),
  },
  { additionalProperties: false },
)

export const EquivalentsSchema = Type.Object({
  locale: Type.String({ description: 'The supported locale used' }),
  equivalents: Type.Array(Type.Object({ key: Type.String(), value: Type.Number(), description: Type.String() })),
})

export const AllocationRecordsSchema = Type.Object({
  data: Type.Array(ImpactRecordSchema, { description: "The allocation's record, then its reversal's when it was reversed" }),
})

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T) =>
  Type.Union([schema, Type.Null()])

export const AllocationDeliveriesSchema = Type.Object({
  data: Type.Array(
    Type.Object({
      id: UuidSchema,
      eventId: UuidSchema,
      eventType: Type.String(),
      endpointId: UuidSchema,
      endpointUrl: Type.String(),
      status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
      attempts: Type.Integer(),
      nextAttemptAt: nullable(Type.String({ format: 'date-time' })),
      lastAttemptAt: nullable(Type.String({ format: 'date-time' })),
      lastStatusCode: nullable(Type.Integer()),
      lastError: nullable(Type.String()),
      createdAt: Type.String({ format: 'date-time' }),
    }),
  ),
})

export type AllocationDeliveriesResponse = Static<typeof AllocationDeliveriesSchema>
