// Wire schema of GET /quotes/:id/explain (docs/pricing.md, "Explaining a quote"). Figures are exact decimal strings.
import { Type, type Static } from '@sinclair/typebox'
import { nullable, UuidSchema } from './common.js'

const exact = (description?: string) => Type.String(description ? { description } : {})
const TaxLineSchema = Type.Object({ rate: exact(), rule: nullable(Type.String()) })
const SectionSchema = {
  taxRates: Type.Object({ impactTax: exact(), serviceFee: exact(), serviceFeeTax: exact() }),
  grossFactor: exact('D = 1 + impactTax + serviceFee × (1 + serviceFeeTax)'),
  splitWeights: Type.Array(exact(), { description: '[1, impactTax, serviceFee, serviceFee × serviceFeeTax]' }),
  effectiveRates: Type.Object({ impact: exact(), impactTax: exact(), serviceFee: exact(), serviceFeeTax: exact() }),
}
const SourcedRateSchema = Type.Object({ rate: exact(), date: Type.String(), source: Type.String() })

export const QuoteExplanationSchema = Type.Object(
  {
    quoteId: UuidSchema,
    createdAt: Type.String({ format: 'date-time' }),
    quoteDate: Type.String({ description: 'The UTC date of its tax rates and CPI year' }),
    impactType: Type.Union([Type.Literal('carbon'), Type.Literal('nature')]),
    currencyCode: Type.String(),
    minorUnits: Type.Integer(),
    missing: Type.Array(Type.String(), {
      description: 'What this quote did not lock (quotes priced before explanations); empty when complete',
    }),
    transaction: Type.Object({ amount: exact(), currencyCode: Type.String() }),
    footprint: Type.Object({
      mcc: Type.String(),
      merchantCountryCode: nullable(Type.String()),
      factor: Type.Object({
        id: Type.String(),
        source: Type.String(),
        version: Type.String(),
        region: Type.String(),
        matchedBy: Type.String(),
        value: exact(),
        tailpipeValue: nullable(Type.String()),
        unit: Type.String(),
        baseCurrency: Type.String(),
        priceYear: Type.Integer(),
      }),
      fx: Type.Object({ from: Type.String(), to: Type.String(), rate: exact(), date: Type.String(), source: Type.String() }),
      deflator: Type.Object({
        value: exact(),
        basis: nullable(
          Type.Object({
            series: Type.String(),
            priceYear: Type.Integer(),
            priceYearIndex: exact(),
            year: Type.Integer(),
            yearIndex: exact(),
          }),
        ),
        rule: Type.String(),
      }),
      spend: exact('amount × fx.rate × deflator, exact'),
      result: Type.Union([
        Type.Object({ kind: Type.Literal('carbon'), gramsExact: exact(), co2eGrams: exact(), co2eOunces: exact() }),
        Type.Object({ kind: Type.Literal('nature'), squareMetresExact: exact(), areaSquareMetres: exact(), areaSquareFeet: exact() }),
      ]),
      equivalents: Type.Array(Type.Object({ key: Type.String(), value: Type.Number(), basis: Type.String() })),
    }),
    tax: Type.Object({
      ruleSetVersion: Type.String(),
      effectiveDate: Type.String(),
      rateSource: nullable(Type.String()),
      jurisdiction: Type.Object({ country: Type.String(), state: nullable(Type.String()), basis: Type.String() }),
      creditImpact: TaxLineSchema,
      contributionImpact: TaxLineSchema,
      serviceFee: TaxLineSchema,
    }),
    credits: nullable(
      Type.Object({
        projects: Type.Array(
          Type.Object({
            id: Type.String(),
            name: Type.String(),
            impactPartnerId: Type.String(),
            catalogue: Type.Object({ price: exact(), currencyCode: Type.String() }),
            fx: nullable(SourcedRateSchema),
            unitPrice: exact(),
            weight: exact(),
            weightShare: exact(),
          }),
        ),
        unitPriceExact: nullable(Type.String()),
        unitPrice: exact(),
        tonnes: exact(),
        section: Type.Object(SectionSchema),
        totalExact: exact('tonnes × unitPrice × grossFactor, before rounding'),
        amounts: Type.Object({ total: exact(), impact: exact(), impactTax: exact(), serviceFee: exact(), serviceFeeTax: exact() }),
      }),
    ),
    contribution: Type.Object({ ...SectionSchema, impactPartnerIds: Type.Array(Type.String()) }),
    rounding: Type.Array(Type.Object({ figure: Type.String(), rule: Type.String() })),
  },
  { title: 'QuoteExplanation' },
)

export type QuoteExplanationBody = Static<typeof QuoteExplanationSchema>
