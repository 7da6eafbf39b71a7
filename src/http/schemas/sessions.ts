// Wire schemas of post-purchase and checkout sessions (docs/api-contract.md, "Sessions").
import { Type, type Static } from '@sinclair/typebox'
import {
  CarbonFootprintSchema,
  ContributionSectionSchema,
  CreditsSectionSchema,
  ImpactPartnerSchema,
  LocaleSchema,
  NatureFootprintSchema,
  quoteRequestFields,
  type AmountLimits,
} from './quotes.js'
import { nullable, stringEnum, UuidSchema } from './common.js'

export const SdkVariantSchema = stringEnum(
  ['embedded', 'takeover'] as const,
  'embedded: a container on the confirmation page; takeover: a full page between payment and order confirmation',
)

const ImpactTypeSchema = stringEnum(['carbon', 'nature'] as const, 'Defaults to carbon')

const sessionFields = (limits: AmountLimits) => ({
  organisationId: UuidSchema,
  impactType: Type.Optional(ImpactTypeSchema),
  locale: Type.Optional({ ...LocaleSchema, description: "Localises the stored quote's equivalents; defaults to en-GB" }),
  ...quoteRequestFields(limits),
  // Flat here, unlike the quote request's projectFilters.credits (as the contract has it).
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

export const postPurchaseSessionBodySchema = (limits: AmountLimits) =>
  Type.Object(
    {
      sdkVariant: SdkVariantSchema,
      ...sessionFields(limits),
    },
    { additionalProperties: false },
  )

export const checkoutSessionBodySchema = (limits: AmountLimits) => Type.Object(sessionFields(limits), { additionalProperties: false })

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

export const SdkProjectSchema = Type.Object(
  {
    id: UuidSchema,
    impactPartnerId: UuidSchema,
    name: Type.String(),
    shortDescription: Type.String(),
    location: Type.Object({
      countryCode: { ...nullable(Type.String()), description: 'ISO 3166-1 alpha-3; null for a project not tied to one country' },
      countryName: { ...nullable(Type.String()), description: "The country's name in the response's locale" },
      state: nullable(Type.String()),
    }),
  },
  { title: 'SdkProject' },
)

export const SdkDisclosureSchema = Type.Object(
  {
    collectingParty: {
      ...nullable(Type.String()),
      description: 'Who collects contributions (the deployment operator, OPERATOR_LEGAL_NAME); null when not configured',
    },
    payoutDays: Type.Object(
      { min: Type.Integer(), max: Type.Integer() },
      { description: 'Contributions reach the impact partners within min to max days (DISCLOSURE_PAYOUT_DAYS)' },
    ),
  },
  { title: 'SdkDisclosure', description: 'What the US charitable-fundraising disclosure states (the SDK shows it under en-US)' },
)

export type SdkDisclosure = Static<typeof SdkDisclosureSchema>

const withPartners = { impactPartners: Type.Array(ImpactPartnerSchema) }

const sdkSessionHeader = {
  sessionId: UuidSchema,
  kind: stringEnum(['post-purchase', 'checkout'] as const, 'Which endpoint created the session'),
  sdkVariant: { ...nullable(SdkVariantSchema), description: 'null for checkout sessions' },
  impactType: ImpactTypeSchema,
  expiresAt: Type.String({ format: 'date-time' }),
  quoteId: UuidSchema,
  currencyCode: Type.String(),
  locale: Type.String({ description: 'The locale the equivalents are written in, after fallback' }),
  disclosure: SdkDisclosureSchema,
}

const SdkContributionSchema = Type.Object({ ...ContributionSectionSchema.properties, ...withPartners })

export const SdkCarbonSessionSchema = Type.Object(
  {
    ...sdkSessionHeader,
    footprint: CarbonFootprintSchema,
    credits: Type.Object({
      ...CreditsSectionSchema.properties,
      ...withPartners,
      projects: Type.Array(SdkProjectSchema, { description: 'The projects the quote priced, in its order' }),
    }),
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

export type CreatedSessionBody = Static<typeof CreatedSessionSchema>
export type SdkSessionBody = Static<typeof SdkSessionSchema>
