// Wire schemas of post-purchase and checkout sessions (spec 2.4, 2.5; DESIGN.md §7).
import { Type, type TSchema } from '@sinclair/typebox'
import type { Config } from '../config.js'
import {
  CarbonFootprintSchema,
  ConsumerSchema,
  ContributionSectionSchema,
  CreditsSectionSchema,
  ImpactPartnerSchema,
  MerchantSchema,
  NatureFootprintSchema,
  orderItemsSchema,
  transactionSchema,
} from './quote-schemas.js'
import { UuidSchema } from './schemas.js'

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

// Enums rather than unions of literals: one clear validation error ("must be equal to one of the allowed values").
const stringEnum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], description })

export const SdkVariantSchema = stringEnum(
  ['embedded', 'takeover'] as const,
  'embedded: a container on the confirmation page; takeover: a full page between payment and order confirmation',
)

const ImpactTypeSchema = stringEnum(['carbon', 'nature'] as const, 'Defaults to carbon')

const LocaleSchema = Type.String({ minLength: 1, maxLength: 35, description: 'BCP 47 tag; unsupported locales fall back to en-GB' })

const sessionFields = (config: Config) => ({
  organisationId: UuidSchema,
  impactType: Type.Optional(ImpactTypeSchema),
  locale: Type.Optional({ ...LocaleSchema, description: "Localises the stored quote's equivalents; defaults to en-GB" }),
  consumer: ConsumerSchema,
  merchant: Type.Optional(nullable(MerchantSchema)),
  transaction: transactionSchema(config),
  orderItems: Type.Optional(nullable(orderItemsSchema(config))),
  // Flat here, unlike the quote request's projectFilters.credits (spec 2.4).
  projectFilters: Type.Optional(
    nullable(
      Type.Object(
        {
          matchConsumerLocation: Type.Optional(
            Type.Boolean({ description: 'Prefer credit projects near the consumer (state, then country)' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  ),
})

export const postPurchaseSessionBodySchema = (config: Config) =>
  Type.Object(
    {
      sdkVariant: SdkVariantSchema,
      ...sessionFields(config),
    },
    { additionalProperties: false },
  )

export const checkoutSessionBodySchema = (config: Config) => Type.Object(sessionFields(config), { additionalProperties: false })

export const CreatedSessionSchema = Type.Object(
  {
    sessionId: UuidSchema,
    clientSecret: Type.String({ description: 'cs_<live|test>_…_secret_…: pass it to the frontend SDK only. Shown once; stored hashed.' }),
    quoteId: UuidSchema,
    expiresAt: Type.String({
      format: 'date-time',
      description: 'ISO 8601 UTC; after it the session answers 410 and a new one must be created',
    }),
  },
  { title: 'CreatedSession' },
)

export const SessionQuerySchema = Type.Object(
  {
    locale: Type.Optional({ ...LocaleSchema, description: "Re-localises the equivalents; defaults to the quote's locale" }),
  },
  { additionalProperties: false },
)

const withPartners = { impactPartners: Type.Array(ImpactPartnerSchema) }

const sdkSessionHeader = {
  sessionId: UuidSchema,
  kind: stringEnum(['post-purchase', 'checkout'] as const, 'Which endpoint created the session'),
  sdkVariant: Type.Union([SdkVariantSchema, Type.Null()], { description: 'null for checkout sessions' }),
  impactType: ImpactTypeSchema,
  expiresAt: Type.String({ format: 'date-time' }),
  quoteId: UuidSchema,
  currencyCode: Type.String(),
  locale: Type.String({ description: 'The locale the equivalents are written in, after fallback' }),
}

const SdkContributionSchema = Type.Object({ ...ContributionSectionSchema.properties, ...withPartners })

export const SdkCarbonSessionSchema = Type.Object(
  {
    ...sdkSessionHeader,
    footprint: CarbonFootprintSchema,
    credits: Type.Object({ ...CreditsSectionSchema.properties, ...withPartners }),
    contribution: SdkContributionSchema,
  },
  { title: 'SdkCarbonSession' },
)

export const SdkNatureSessionSchema = Type.Object(
  {
    ...sdkSessionHeader,
    footprint: NatureFootprintSchema,
    contribution: SdkContributionSchema,
  },
  { title: 'SdkNatureSession' },
)

export const SdkSessionSchema = Type.Union([SdkCarbonSessionSchema, SdkNatureSessionSchema])
