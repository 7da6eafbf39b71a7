// Wire schemas of impact reconciliation records (docs/reconciliation.md): ekko's query parameters and record shape.
import { Type, type Static, type TObject } from '@sinclair/typebox'
import { stringEnum, UuidSchema } from './common.js'
import { SETTLEMENT_MODELS } from '../../domain/profit-share.js'

// Nullable fields as a type list rather than `nullable()`'s anyOf: a page serialises a hundred records, and the
// serialiser resolves an anyOf by validating each value, a type list by a typeof check.
const nullableString = () => Type.Unsafe<string | null>({ type: ['string', 'null'] })
const nullableObject = <T extends TObject>(schema: T) => Type.Unsafe<Static<T> | null>({ ...schema, type: ['object', 'null'] })

export const DateTimeSchema = (description: string) =>
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

const paging = {
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
}

export const ImpactRecordListQuerySchema = Type.Object({ ...filters, ...paging }, { additionalProperties: false })

export const ImpactRecordExportQuerySchema = Type.Object(filters, { additionalProperties: false })

/** ekko's profit-share list takes the impact list's parameters except consumerReference and impactPartnerId. */
const { consumerReference: _consumer, impactPartnerId: _partner, ...profitShareFilters } = filters

export const ProfitShareRecordListQuerySchema = Type.Object({ ...profitShareFilters, ...paging }, { additionalProperties: false })
export const ProfitShareRecordExportQuerySchema = Type.Object(profitShareFilters, { additionalProperties: false })

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
  line1: nullableString(),
  line2: nullableString(),
  line3: nullableString(),
  city: nullableString(),
  state: nullableString(),
  postalCode: nullableString(),
  countryCode: nullableString(),
})

export const ImpactRecordSchema = Type.Object(
  {
    fundsAllocationId: UuidSchema,
    reversalId: Type.Optional({ ...UuidSchema, description: "A reversal's record only: its id as a record" }),
    quoteId: UuidSchema,
    fundsDateTime: Type.String({ format: 'date-time', description: 'When the allocation (or the reversal) was recorded, UTC' }),
    consumerReference: nullableString(),
    fundsOrganisationId: UuidSchema,
    fundsOrganisationReference: nullableString(),
    collectionOrganisationId: { ...UuidSchema, description: 'The organisation whose API key made the allocation' },
    fundsCurrencyCode: Type.String(),
    reversal: Type.Boolean(),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    amounts: AmountsSchema,
    merchant: Type.Object({ name: Type.String(), mcc: nullableString(), address: nullableObject(AddressSchema) }),
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

const ProfitShareAllocationSchema = Type.Object({
  beneficiaryOrganisationId: UuidSchema,
  beneficiaryOrganisationReference: nullableString(),
  billingCurrencyCode: Type.String(),
  billingCurrencyExchangeRate: Type.Number({
    description: 'Billing-currency units per funds-currency unit, locked when allocated (1: same currency)',
  }),
  fundsProfitShare: money("The beneficiary's part of the service fee in the funds currency (the exact split)"),
  amounts: Type.Object({
    profitShare: money('fundsProfitShare × billingCurrencyExchangeRate, in the billing currency'),
    profitShareTax: money("Tax on it in the beneficiary's jurisdiction, in the billing currency"),
    profitShareTaxRate: Type.Number(),
  }),
})

export const ProfitShareRecordSchema = Type.Object(
  {
    fundsAllocationId: UuidSchema,
    reversalId: Type.Optional({ ...UuidSchema, description: "A reversal's record only: its id as a record" }),
    quoteId: UuidSchema,
    fundsDateTime: Type.String({ format: 'date-time', description: 'When the allocation (or the reversal) was recorded, UTC' }),
    consumerReference: nullableString(),
    fundsOrganisationId: UuidSchema,
    fundsOrganisationReference: nullableString(),
    billingOrganisationId: {
      ...UuidSchema,
      description: 'The organisation that settles the allocation with the platform (whose API key made it)',
    },
    fundsCurrencyCode: Type.String(),
    reversal: Type.Boolean(),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    amounts: AmountsSchema,
    merchant: Type.Object({ name: Type.String(), mcc: nullableString() }),
    settlementModel: stringEnum(SETTLEMENT_MODELS, "The tree's settlement model when the allocation was made"),
    platformProfitShare: {
      ...Type.Unsafe<number | null>({ type: ['number', 'null'] }),
      description:
        "What the platform keeps of the service fee, in the funds currency; null unless the reader sees every line (the tree's root)",
    },
    profitShareAllocations: Type.Array(ProfitShareAllocationSchema),
  },
  { title: 'ProfitShareRecord' },
)

export type ProfitShareRecordResponse = Static<typeof ProfitShareRecordSchema>

export const ProfitShareRecordListSchema = Type.Object(
  { hasMore: Type.Boolean({ description: 'More records follow in the direction read' }), data: Type.Array(ProfitShareRecordSchema) },
  { title: 'ProfitShareRecordList' },
)
