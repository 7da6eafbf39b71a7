// Wire schemas of impact reconciliation records (docs/reconciliation.md): ekko's query parameters and record shape.
import { Type, type Static } from '@sinclair/typebox'
import { nullable, UuidSchema } from './common.js'

const DateTimeSchema = (description: string) =>
  Type.String({ format: 'date-time', description: `${description} (ISO 8601 date-time with a time zone, e.g. 2024-01-01T00:00:00Z)` })

const filters = {
  dateTimeFrom: DateTimeSchema('Start of the window, inclusive'),
  dateTimeTo: DateTimeSchema('End of the window, exclusive; at most 366 days after dateTimeFrom'),
  consumerReference: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "The quote's consumer.reference" })),
  impactPartnerId: Type.Optional({ ...UuidSchema, description: 'Records with a credit or contribution line for this impact partner' }),
  fundsOrganisationId: Type.Optional({
    ...UuidSchema,
    description: "One organisation of the key's tree (default: the key's organisation and all its descendants)",
  }),
}

export const ImpactRecordListQuerySchema = Type.Object(
  {
    ...filters,
    // Query strings are not coerced (one validator for bodies and queries): the limit is checked as digits.
    limit: Type.Optional(
      Type.String({
        pattern: '^(100|[1-9][0-9]?)$',
        errorMessage: { pattern: 'must be a whole number from 1 to 100' },
        description: 'Records per page, 1–100 (default 10)',
      }),
    ),
    startingAfter: Type.Optional({ ...UuidSchema, description: 'A record id (fundsAllocationId or reversalId): the page after it' }),
    endingBefore: Type.Optional({ ...UuidSchema, description: 'A record id (fundsAllocationId or reversalId): the page before it' }),
  },
  { additionalProperties: false },
)

export const ImpactRecordExportQuerySchema = Type.Object(filters, { additionalProperties: false })

export type ImpactRecordListQuery = Static<typeof ImpactRecordListQuerySchema>
export type ImpactRecordExportQuery = Static<typeof ImpactRecordExportQuerySchema>

const money = (description?: string) => Type.Number(description ? { description } : {})

const AmountsSchema = Type.Object({
  total: money('impact + impactTax + serviceFee + serviceFeeTax'),
  impact: money(),
  impactTax: money(),
  serviceFee: money(),
  serviceFeeTax: money(),
})

const LineAmountsSchema = Type.Object({
  total: money(),
  impact: money(),
  impactTax: money(),
  serviceFee: money(),
  serviceFeeTax: money(),
  impactTaxRate: Type.Number(),
  serviceFeeTaxRate: Type.Number(),
})

const AddressSchema = Type.Object({
  line1: nullable(Type.String()),
  line2: nullable(Type.String()),
  line3: nullable(Type.String()),
  city: nullable(Type.String()),
  state: nullable(Type.String()),
  postalCode: nullable(Type.String()),
  countryCode: nullable(Type.String()),
})

export const ImpactRecordSchema = Type.Object(
  {
    fundsAllocationId: UuidSchema,
    reversalId: Type.Optional({ ...UuidSchema, description: "A reversal's record only: its id as a record" }),
    quoteId: UuidSchema,
    fundsDateTime: Type.String({ format: 'date-time', description: 'When the allocation (or the reversal) was recorded, UTC' }),
    consumerReference: nullable(Type.String()),
    fundsOrganisationId: UuidSchema,
    fundsOrganisationReference: nullable(Type.String()),
    collectionOrganisationId: { ...UuidSchema, description: 'The organisation whose API key made the allocation' },
    fundsCurrencyCode: Type.String(),
    reversal: Type.Boolean(),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    amounts: AmountsSchema,
    merchant: Type.Object({ name: Type.String(), mcc: nullable(Type.String()), address: nullable(AddressSchema) }),
    credits: Type.Array(
      Type.Object({ impactPartnerId: UuidSchema, projectId: UuidSchema, quantityTonnes: Type.Number(), amounts: LineAmountsSchema }),
    ),
    contributions: Type.Array(Type.Object({ impactPartnerId: UuidSchema, amounts: LineAmountsSchema })),
  },
  { title: 'ImpactRecord' },
)

export type ImpactRecordResponse = Static<typeof ImpactRecordSchema>

export const ImpactRecordListSchema = Type.Object(
  { hasMore: Type.Boolean({ description: 'More records follow in the direction read' }), data: Type.Array(ImpactRecordSchema) },
  { title: 'ImpactRecordList' },
)
