// Wire schemas of funds allocations and their reversals (docs/api-contract.md, "Funds allocations").
import { Type, type Static } from '@sinclair/typebox'
import { AppError } from '../../errors.js'
import type { HttpErrorCode } from '../errors.js'
import { CurrencyCodeSchema, nullable, UuidSchema } from './common.js'
import type { AmountLimits } from './quotes.js'

/** 1–255 printable ASCII characters; an RFC 8941 quoted string ("…") is accepted and unquoted. */
const IDEMPOTENCY_KEY = '^(?:"[\\x20-\\x21\\x23-\\x5b\\x5d-\\x7e]{1,255}"|[\\x20-\\x7e]{1,255})$'

export const AllocationHeadersSchema = Type.Object({
  'idempotency-key': Type.String({
    pattern: IDEMPOTENCY_KEY,
    errorMessage: { pattern: 'must be 1 to 255 printable ASCII characters' },
    description: '1–255 printable ASCII characters, unique per allocation',
  }),
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
              impactPartnerIds: Type.Optional(
                Type.Array(UuidSchema, {
                  minItems: 1,
                  maxItems: 50,
                  description: "At least one; omit the field for all the quote's partners",
                }),
              ),
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

/**
 * A reversal takes no body: it always reverses the whole allocation (partial reversals are not part of the
 * contract). No body or an empty JSON object is accepted; an `amount` is refused with its own code, anything
 * else like any unknown property. (Checked by hand: Fastify would refuse an absent body under a body schema.)
 */
export function checkReversalBody(body: unknown): void {
  if (body === undefined || body === null) return
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError<HttpErrorCode>('BAD_REQUEST', 'request body must be absent or an empty object', [
      { path: '/', message: 'must be an empty object' },
    ])
  }
  const keys = Object.keys(body)
  if (keys.includes('amount')) {
    throw new AppError<HttpErrorCode>(
      'PARTIAL_REVERSAL_NOT_SUPPORTED',
      'partial reversals are not supported: a reversal reverses the whole allocation',
      [{ path: '/amount', message: 'is not accepted: omit it to reverse the whole allocation' }],
    )
  }
  if (keys.length > 0) {
    throw new AppError<HttpErrorCode>(
      'BAD_REQUEST',
      `${keys[0]} is not a known property`,
      keys.map((key) => ({ path: `/${key}`, message: 'is not a known property' })),
    )
  }
}
