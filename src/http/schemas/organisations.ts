// Wire schemas of organisations (docs/api-contract.md, "Organisations").
import { Type, type Static } from '@sinclair/typebox'
import { AddressSchema, CountryCodeSchema, CurrencyCodeSchema, MccSchema, nullable, stringEnum, text, UuidSchema } from './common.js'
import { SETTLEMENT_MODELS } from '../../domain/profit-share.js'

const AllowedOriginsSchema = nullable(
  Type.Array(Type.String({ minLength: 1 }), {
    description:
      'Web origins whose pages may read this organisation\'s sessions with the browser SDK (CORS): "https://shop.example" or ' +
      '"http://localhost:8080" — scheme, host and port only, at most 20. Stored normalised (lower case, no default port, ' +
      "duplicates dropped). null: inherit the nearest ancestor's list; []: no origin.",
    examples: [['https://www.blossombloom.co.uk']],
  }),
)

// The service checks the range and the decimals, so that a share out of range has its own code (INVALID_PROFIT_SHARE).
const RelativeProfitShareSchema = Type.Number({
  description:
    "The share of the service fee this organisation receives from its direct parent, 0–1 with at most 6 decimals (0.6 = 60% of the parent's share); set by the parent's tree. Default 0.",
  examples: [0.6],
})

const BillingSchema = nullable(
  Type.Object(
    {
      currencyCode: { ...CurrencyCodeSchema, description: 'The currency its profit share is billed in (one Canopy can price)' },
      email: Type.Optional(nullable(Type.String({ format: 'email', maxLength: 254 }))),
      taxNumber: Type.Optional(nullable(Type.String({ maxLength: 50 }))),
      companyRegistrationNumber: Type.Optional(nullable(Type.String({ maxLength: 50 }))),
      countryCode: Type.Optional({
        ...CountryCodeSchema,
        description: 'Where the tax on its profit share is due (ISO 3166-1 alpha-3); default: its address country',
      }),
      state: Type.Optional(nullable(Type.String({ maxLength: 100, description: 'US state or Canadian province, for their tax' }))),
    },
    { additionalProperties: false },
  ),
)

const IpAllowlistSchema = {
  ...nullable(
    Type.Object(
      {
        enabled: Type.Boolean({ description: 'On: API keys of the organisation are refused from any other address (403 IP_NOT_ALLOWED)' }),
        entries: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
          maxItems: 100,
          description:
            'IPv4 or IPv6 addresses ("203.0.113.7"), CIDR blocks ("10.0.0.0/8", "2001:db8::/32") or ranges ("192.0.2.10-192.0.2.50"), ' +
            'at most 100; stored normalised (a block by its network address, IPv6 compressed, duplicates dropped)',
        }),
      },
      { additionalProperties: false },
    ),
  ),
  description:
    "Where the organisation's API keys may be used from (and its descendants' keys, unless they have a list of their own). " +
    "null: inherit the nearest ancestor's list (none: any address).",
  examples: [{ enabled: true, entries: ['203.0.113.7', '10.0.0.0/8'] }],
}

export const CreateOrganisationBodySchema = Type.Object(
  {
    parentOrganisationId: UuidSchema,
    tradingName: text(200),
    legalName: text(200),
    organisationReference: Type.Optional(nullable(Type.String({ maxLength: 100 }))),
    address: AddressSchema,
    currencyCode: CurrencyCodeSchema,
    website: Type.Optional(nullable(Type.String({ format: 'uri', maxLength: 500 }))),
    mcc: Type.Optional(nullable(MccSchema)),
    allowedOrigins: Type.Optional(AllowedOriginsSchema),
    relativeProfitShare: Type.Optional(RelativeProfitShareSchema),
    billing: Type.Optional(BillingSchema),
    ipAllowlist: Type.Optional(IpAllowlistSchema),
  },
  { additionalProperties: false },
)

export type CreateOrganisationBody = Static<typeof CreateOrganisationBodySchema>

export const UpdateOrganisationBodySchema = Type.Object(
  {
    allowedOrigins: Type.Optional(AllowedOriginsSchema),
    relativeProfitShare: Type.Optional(RelativeProfitShareSchema),
    billing: Type.Optional(BillingSchema),
    ipAllowlist: Type.Optional(IpAllowlistSchema),
    requireSecondFactor: Type.Optional(
      Type.Boolean({
        description: 'Every Hub user of the organisation (and of its descendants) must sign in with TOTP (admins and API keys only)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, errorMessage: { minProperties: 'must set at least one field' } },
)

export type UpdateOrganisationBody = Static<typeof UpdateOrganisationBodySchema>

export const OrganisationSchema = Type.Object(
  {
    organisationId: UuidSchema,
    parentOrganisationId: nullable(UuidSchema),
    organisationReference: nullable(Type.String()),
    tradingName: Type.String(),
    legalName: Type.String(),
    address: Type.Object({
      line1: Type.Optional(Type.String()),
      line2: Type.Optional(nullable(Type.String())),
      line3: Type.Optional(nullable(Type.String())),
      city: Type.Optional(Type.String()),
      postalCode: Type.Optional(Type.String()),
      state: Type.Optional(nullable(Type.String())),
      countryCode: Type.String(),
    }),
    currencyCode: Type.String(),
    website: nullable(Type.String()),
    mcc: nullable(Type.String()),
    serviceFeePercentage: Type.Number({ description: 'Service fee as a proportion of the impact amount (0.2 = 20%)' }),
    taxLiability: Type.Union([Type.Literal('platform'), Type.Literal('organisation')]),
    relativeProfitShare: Type.Number({ description: 'Its share of what its parent receives of the service fee (0–1)' }),
    proportionalProfitShare: Type.Number({
      description:
        "Its share of the whole service fee, computed: its relativeProfitShare × its parent's proportionalProfitShare (a root's parent, the platform, has 1); rounded to 10 decimals",
    }),
    billing: nullable(
      Type.Object({
        currencyCode: Type.String(),
        email: nullable(Type.String()),
        taxNumber: nullable(Type.String()),
        companyRegistrationNumber: nullable(Type.String()),
        countryCode: Type.String(),
        state: nullable(Type.String()),
      }),
    ),
    settlementModel: stringEnum(SETTLEMENT_MODELS, "How its tree settles profit share (its root's, set by the operator; default gross)"),
    status: Type.Object({ value: Type.Union([Type.Literal('active'), Type.Literal('inactive')]), message: Type.Null() }),
    createdAt: Type.String({ format: 'date-time' }),
    allowedOrigins: {
      ...nullable(Type.Array(Type.String())),
      description: "The organisation's own allowed origins (CORS for the browser SDK); null: it inherits its nearest ancestor's",
    },
    ipAllowlist: {
      ...nullable(Type.Object({ enabled: Type.Boolean(), entries: Type.Array(Type.String()) })),
      description: "The organisation's own IP allowlist for its API keys; null: it inherits its nearest ancestor's",
    },
    requireSecondFactor: Type.Boolean({ description: 'Whether its Hub users must sign in with a second factor (TOTP)' }),
  },
  { title: 'Organisation' },
)

export const OrganisationTreeSchema = Type.Object(
  {
    data: Type.Array(
      Type.Intersect([OrganisationSchema, Type.Object({ depth: Type.Integer({ description: "Levels below the caller's organisation" }) })]),
    ),
  },
  { title: 'OrganisationTree' },
)

export type OrganisationResponse = Static<typeof OrganisationSchema>
