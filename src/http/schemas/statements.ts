// Wire schemas of statements (docs/reconciliation.md, "Statements").
import { Type, type Static } from '@sinclair/typebox'
import { SETTLEMENT_MODELS } from '../../domain/profit-share.js'
import { stringEnum, UuidSchema } from './common.js'

export const StatementQuerySchema = Type.Object(
  {
    organisationId: { ...UuidSchema, description: "The key's organisation or one of its descendants" },
    period: Type.String({
      pattern: '^\\d{4}-(0[1-9]|1[0-2])$',
      errorMessage: { pattern: 'must be a month, YYYY-MM' },
      description: 'The month, YYYY-MM (UTC); the current month gives the figures so far',
      examples: ['2026-11'],
    }),
  },
  { additionalProperties: false },
)

export type StatementQuery = Static<typeof StatementQuerySchema>

const money = (description?: string) => Type.Number(description ? { description } : {})

export const StatementSchema = Type.Object(
  {
    organisationId: UuidSchema,
    period: Type.String(),
    from: Type.String({ format: 'date-time', description: 'Start of the month, inclusive (UTC)' }),
    to: Type.String({ format: 'date-time', description: 'End of the month, exclusive (UTC)' }),
    complete: Type.Boolean({ description: 'False for the current month: the figures so far' }),
    settlementModel: stringEnum(SETTLEMENT_MODELS, "The tree's settlement model today (each record settles under the one it locked)"),
    currencies: Type.Array(
      Type.Object({
        currencyCode: Type.String(),
        collected: Type.Object(
          {
            allocations: Type.Integer(),
            reversals: Type.Integer(),
            total: money('What it collected, net of reversals'),
            impact: money('Impact it owes onward'),
            impactTax: money('Tax on the impact, owed onward'),
            serviceFee: money(),
            serviceFeeTax: money(),
          },
          { description: 'The allocations its API key made (it is their billing organisation), less their reversals' },
        ),
        profitShare: Type.Object(
          { lines: Type.Integer(), earned: money(), tax: money() },
          { description: 'Its own profit-share lines (billing currency), net of reversals' },
        ),
        settlement: Type.Object({
          payableToPlatform: money('collected.total − profitShareWithheld'),
          profitShareWithheld: money("Net model: every beneficiary's share of the fees it collected, kept back"),
          profitShareFromPlatform: money('Gross model: its share and tax, paid by the platform'),
          profitShareCreditedOnInvoice: money("Invoice model: its share and tax, credited against the platform's invoice"),
          profitShareFromCollector: money('Net model: its share and tax, settled by the organisation that collected'),
        }),
      }),
    ),
  },
  { title: 'Statement' },
)

export type StatementResponse = Static<typeof StatementSchema>
