// Wire schemas of funds allocations and their reversals (docs/api-contract.md, "Funds allocations").
import { Type, type Static } from '@sinclair/typebox'
import { CurrencyCodeSchema, nullable, UuidSchema } from './common.js'
import type { AmountLimits } from './quotes.js'

/** 1–255 printable ASCII characters; an RFC 8941 quoted string ("…") is accepted and unquoted. */
const IDEMPOTENCY_KEY = '^(?:"[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]{1,255}"|[\\x20-\\x7e]{1,255})$'

export const AllocationHeadersSchema = Type.Object({
  'idempotency-key': Type.String({ pattern: IDEMPOTENCY_KEY, description: '1–255 printable ASCII characters, unique per allocation' }),
})

/** The key as the client meant it: an RFC 8941 quoted string loses its quotes. */
export const idempotencyKeyOf = (header: string): string => header.replace(/^"(.*)"$/, '$1')

export const allocationBodySchema = (limits: AmountLimits) => {
  const amount = Type.Number({
    exclusiveMinimum: 0,
    maximum: limits.amountMax,
    description: 'Amount paid, including service fee and sales tax',
  })
  return Type.Object(
    {
      organisationId: UuidSchema,
      quoteId: UuidSchema,
      currencyCode: Type.Optional(CurrencyCodeSchema),
      credits: Type.Optional(nullable(Type.Object({ amount }, { additionalProperties: false }))),
      contribution: Type.Optional(
        nullable(
          Type.Object(
            {
              amount,
              impactPartnerIds: Type.Optional(Type.Array(UuidSchema, { maxItems: 50 })),
            },
            { additionalProperties: false },
          ),
        ),
      ),
      issueTaxReceipt: Type.Optional(Type.Boolean()),
      consumerEmail: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    },
    { additionalProperties: false },
  )
}

export type AllocationBody = Static<ReturnType<typeof allocationBodySchema>>

const EntryAmounts = {
  impactAmount: Type.Number({ description: 'Amount directed to the project or partner' }),
  impactSalesTaxAmount: Type.Number(),
  impactSalesTaxRate: Type.Number(),
  serviceFeeAmount: Type.Number({ description: "The service's fee" }),
  serviceFeeSalesTaxAmount: Type.Number(),
  serviceFeeSalesTaxRate: Type.Number(),
}

export const AllocationSchema = Type.Object(
  {
    fundsAllocationId: UuidSchema,
    reversalId: Type.Optional(UuidSchema),
    quoteId: UuidSchema,
    currencyCode: Type.String(),
    credits: Type.Array(Type.Object({ projectId: UuidSchema, impactPartnerId: UuidSchema, ...EntryAmounts })),
    contributions: Type.Array(Type.Object({ impactPartnerId: UuidSchema, ...EntryAmounts })),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'FundsAllocation' },
)

export type AllocationResponse = Static<typeof AllocationSchema>
