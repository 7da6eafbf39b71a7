// Wire schemas of organisations (docs/api-contract.md, "Organisations").
import { Type, type Static } from '@sinclair/typebox'
import { AddressSchema, CurrencyCodeSchema, MccSchema, nullable, text, UuidSchema } from './common.js'

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
  },
  { additionalProperties: false },
)

export type CreateOrganisationBody = Static<typeof CreateOrganisationBodySchema>

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
    status: Type.Object({ value: Type.Union([Type.Literal('active'), Type.Literal('inactive')]), message: Type.Null() }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Organisation' },
)

export type OrganisationResponse = Static<typeof OrganisationSchema>
