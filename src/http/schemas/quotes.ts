// Wire schemas of quotes (docs/api-contract.md, "Quotes"), shared with the session routes that create quotes.
import { Type, type Static } from '@sinclair/typebox'
import type { QuoteRequestRecord } from '../../db/database.js'
import { DEFAULT_LOCALE } from '../../domain/equivalents.js'
import type { ErrorCode } from '../errors.js'
import { CountryCodeSchema, CurrencyCodeSchema, MccSchema, nullable, optionalText, text, UuidSchema } from './common.js'

/** The real service's documented florist purchase, used as the OpenAPI example of every quote-creating request. */
export const FLORIST_EXAMPLE = {
  organisationId: '1f9e36e2-fdf3-4d36-a6ae-a2a146ab5ca1',
  locale: 'en-GB',
  consumer: { reference: 'consumer_123', countryCode: 'GBR', postalCode: 'SW1A 1AA', city: 'London' },
  merchant: {
    name: 'Blossom & Bloom',
    mcc: '5992',
    address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
  },
  transaction: { amount: 47.97, currencyCode: 'GBP' },
  orderItems: [
    {
      itemReference: 'line_1',
      sku: 'POT_MEDIUM',
      description: 'Flower pot',
      category: 'pots',
      quantity: 3,
      unitPrice: { value: 15.99, currencyCode: 'GBP' },
    },
  ],
}

export const ConsumerSchema = Type.Object(
  {
    reference: text(200, 'Your identifier for the consumer'),
    countryCode: CountryCodeSchema,
    postalCode: optionalText(20),
    city: optionalText(100),
    state: optionalText(100),
  },
  { additionalProperties: false, description: 'Used for tax calculation' },
)

export const MerchantSchema = Type.Object(
  {
    name: text(200),
    mcc: MccSchema,
    address: Type.Object(
      {
        line1: optionalText(200),
        line2: optionalText(200),
        line3: optionalText(200),
        city: optionalText(100),
        postalCode: optionalText(20),
        state: optionalText(100),
        countryCode: CountryCodeSchema,
      },
      { additionalProperties: false, description: 'Only countryCode is required; it selects the emission factor.' },
    ),
  },
  { additionalProperties: false, description: 'Required when the organisation has no MCC set at organisation level' },
)

/** Bounds that come from configuration. */
export interface AmountLimits {
  amountMax: number
}

export const transactionSchema = (limits: AmountLimits) =>
  Type.Object(
    {
      amount: Type.Number({ exclusiveMinimum: 0, maximum: limits.amountMax, description: "At most the currency's minor-unit decimals" }),
      currencyCode: CurrencyCodeSchema,
    },
    { additionalProperties: false },
  )

export const orderItemsSchema = (limits: AmountLimits) =>
  Type.Array(
    Type.Object(
      {
        itemReference: optionalText(200),
        sku: optionalText(200),
        description: optionalText(500),
        category: optionalText(200),
        quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
        unitPrice: Type.Optional(
          Type.Object(
            {
              value: Type.Number({ minimum: 0, maximum: limits.amountMax }),
              currencyCode: CurrencyCodeSchema,
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
    { maxItems: 500, description: 'Not used in the footprint; stored for analytics and reporting' },
  )

const ResponseOptionsSchema = Type.Object(
  {
    includeImpactPartnerDetails: Type.Optional(Type.Boolean()),
    includeImpactPartnerRates: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)

export const LocaleSchema = Type.String({ minLength: 1, maxLength: 35, description: 'BCP 47 tag; unsupported locales fall back to en-GB' })

/** The fields every quote-creating request has after organisationId and locale (quotes and sessions alike). */
export const quoteRequestFields = (limits: AmountLimits) => ({
  consumer: ConsumerSchema,
  merchant: Type.Optional(nullable(MerchantSchema)),
  transaction: transactionSchema(limits),
  orderItems: Type.Optional(nullable(orderItemsSchema(limits))),
})

export const quoteBodySchema = (limits: AmountLimits) =>
  Type.Object(
    {
      organisationId: UuidSchema,
      locale: LocaleSchema,
      ...quoteRequestFields(limits),
      projectFilters: Type.Optional(
        nullable(
          Type.Object(
            {
              credits: Type.Optional(
                nullable(
                  Type.Object(
                    {
                      matchConsumerLocation: Type.Optional(Type.Boolean()),
                    },
                    { additionalProperties: false },
                  ),
                ),
              ),
            },
            { additionalProperties: false },
          ),
        ),
      ),
      responseOptions: Type.Optional(nullable(ResponseOptionsSchema)),
    },
    { additionalProperties: false },
  )

export type QuoteBody = Static<ReturnType<typeof quoteBodySchema>>

/** The fields every quote-creating request shares (quotes and sessions). */
type QuoteFields = Pick<QuoteBody, 'organisationId' | 'consumer' | 'merchant' | 'transaction' | 'orderItems'> & {
  locale?: string | undefined
}

/**
 * A quote-creating request body → the quote request a service prices and stores: optional objects resolved,
 * defaults explicit. Quotes and sessions differ only in where the location filter sits and in responseOptions.
 */
export function toQuoteRequest(
  body: QuoteFields,
  options: {
    origin: QuoteRequestRecord['origin']
    matchConsumerLocation: boolean | undefined
    responseOptions?: { includeImpactPartnerDetails?: boolean | undefined; includeImpactPartnerRates?: boolean | undefined } | null
  },
): QuoteRequestRecord {
  return {
    organisationId: body.organisationId,
    locale: body.locale ?? DEFAULT_LOCALE,
    consumer: body.consumer,
    merchant: body.merchant ?? null,
    transaction: body.transaction,
    orderItems: body.orderItems ?? null,
    matchConsumerLocation: options.matchConsumerLocation ?? false,
    responseOptions: {
      includeImpactPartnerDetails: options.responseOptions?.includeImpactPartnerDetails ?? false,
      includeImpactPartnerRates: options.responseOptions?.includeImpactPartnerRates ?? false,
    },
    origin: options.origin,
  }
}

const RatesSchema = Type.Object(
  {
    impact: Type.Number(),
    impactTax: Type.Number(),
    serviceFee: Type.Number(),
    serviceFeeTax: Type.Number(),
  },
  { description: 'Proportions (10 decimals) that sum to 1' },
)

const ImageSchema = Type.Object({ path: Type.String(), type: Type.String(), width: Type.Integer(), height: Type.Integer() })

export const ImpactPartnerSchema = Type.Object({
  id: UuidSchema,
  name: Type.String(),
  shortDescription: Type.String(),
  images: Type.Object({
    logos: Type.Optional(Type.Array(ImageSchema)),
    thumbnails: Type.Optional(Type.Array(ImageSchema)),
    backgrounds: Type.Optional(Type.Array(ImageSchema)),
  }),
})

const EquivalentsSchema = Type.Array(Type.Object({ key: Type.String(), value: Type.Number(), description: Type.String() }))

export const CreditsSectionSchema = Type.Object({
  amounts: Type.Object({
    total: Type.Number({ description: 'impact + serviceFee + sales tax: the figure to show the consumer' }),
    impact: Type.Number(),
    impactTax: Type.Number(),
    serviceFee: Type.Number(),
    serviceFeeTax: Type.Number(),
  }),
  effectiveRates: RatesSchema,
  unit: Type.Object({ description: Type.String(), price: Type.Number() }),
  consumerLocationMatchAccuracy: Type.Union([Type.Literal('state'), Type.Literal('country'), Type.Literal('global')]),
  impactPartners: Type.Optional(Type.Array(ImpactPartnerSchema)),
})

export const ContributionSectionSchema = Type.Object({
  effectiveRates: RatesSchema,
  impactPartners: Type.Optional(Type.Array(ImpactPartnerSchema)),
})

const PartnerRatesSchema = Type.Array(Type.Object({ partnerId: UuidSchema, rates: RatesSchema }))

export const CarbonFootprintSchema = Type.Object({
  co2eGrams: Type.Number(),
  co2eOunces: Type.Number(),
  equivalents: EquivalentsSchema,
})

export const NatureFootprintSchema = Type.Object({
  areaSquareMetres: Type.Number({ description: 'Intact nature lost (MSA), an estimate' }),
  areaSquareFeet: Type.Number(),
  equivalents: EquivalentsSchema,
})

const quoteHeader = {
  quoteId: UuidSchema,
  currencyCode: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
}

export const CarbonQuoteSchema = Type.Object(
  {
    ...quoteHeader,
    footprint: CarbonFootprintSchema,
    credits: CreditsSectionSchema,
    contribution: ContributionSectionSchema,
    partnerRates: Type.Optional(Type.Object({ credits: PartnerRatesSchema, contribution: PartnerRatesSchema })),
  },
  { title: 'CarbonQuote' },
)

export const NatureQuoteSchema = Type.Object(
  {
    ...quoteHeader,
    footprint: NatureFootprintSchema,
    contribution: ContributionSectionSchema,
    partnerRates: Type.Optional(Type.Object({ credits: PartnerRatesSchema, contribution: PartnerRatesSchema })),
  },
  { title: 'NatureQuote' },
)

export const QuoteProjectSchema = Type.Object(
  {
    id: UuidSchema,
    impactPartnerId: UuidSchema,
    name: Type.String(),
    shortDescription: Type.String(),
    type: Type.String(),
    location: Type.Object({ countryCode: nullable(Type.String()), state: nullable(Type.String()) }),
    unit: Type.Object({ description: Type.String(), price: Type.Number(), currencyCode: Type.String() }),
    weight: Type.Number({ description: 'Share of every credits allocation locked in the quote (weights sum to 1)' }),
  },
  { title: 'QuoteProject' },
)

export type CarbonQuoteBody = Static<typeof CarbonQuoteSchema>
export type NatureQuoteBody = Static<typeof NatureQuoteSchema>
export type QuoteProjectBody = Static<typeof QuoteProjectSchema>

/** The errors of every quote-creating route (quotes and sessions). */
export const QUOTE_CREATION_ERRORS = [
  'BAD_REQUEST',
  'UNSUPPORTED_CURRENCY',
  'UNKNOWN_COUNTRY',
  'INVALID_MCC',
  'AMOUNT_PRECISION',
  'AMOUNT_OUT_OF_RANGE',
  'MCC_REQUIRED',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'REQUEST_ENTITY_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'NO_CREDIT_PROJECTS',
] as const satisfies readonly ErrorCode[]
