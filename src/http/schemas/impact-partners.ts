// Wire schemas of the catalogue endpoints (docs/api-contract.md, "Catalogue"): ekko's impact partner and project records.
import { Type, type Static } from '@sinclair/typebox'
import { nullable, UuidSchema } from './common.js'
import { ImpactPartnerSchema, QuoteProjectSchema } from './quotes.js'

const paging = {
  limit: Type.Optional(
    Type.String({
      pattern: '^(100|[1-9][0-9]?)$',
      errorMessage: { pattern: 'must be a whole number from 1 to 100' },
      description: 'Records per page, 1–100 (default 100)',
    }),
  ),
  startingAfter: Type.Optional({ ...UuidSchema, description: 'An id: the page after it' }),
  endingBefore: Type.Optional({ ...UuidSchema, description: 'An id: the page before it' }),
}

export const ImpactPartnersQuerySchema = Type.Object(paging, { additionalProperties: false })
export const ImpactPartnerProjectsQuerySchema = Type.Object(
  { projectId: Type.Optional({ ...UuidSchema, description: 'Only this project' }), ...paging },
  { additionalProperties: false },
)

export const CataloguePartnerSchema = Type.Object(
  {
    id: UuidSchema,
    name: Type.String(),
    shortDescription: Type.String(),
    longDescription: nullable(Type.String()),
    logo: nullable(Type.String({ description: "The first logo's path (images.logos[0].path)" })),
    website: nullable(Type.String()),
    images: ImpactPartnerSchema.properties.images,
  },
  { title: 'ImpactPartner' },
)

/** The project record of GET /quotes/:id/projects, without the quote's weight; the price in its catalogue currency. */
const { weight: _weight, ...projectFields } = QuoteProjectSchema.properties
export const CatalogueProjectSchema = Type.Object(projectFields, { title: 'Project' })

export type CataloguePartnerBody = Static<typeof CataloguePartnerSchema>
export type CatalogueProjectBody = Static<typeof CatalogueProjectSchema>
