// Catalogue → wire (docs/api-contract.md, "Catalogue").
import type { CataloguePartner } from '../../db/repositories/catalogue.js'
import type { CreditProject, PartnerImages } from '../../domain/types.js'
import type { CataloguePartnerBody, CatalogueProjectBody } from '../schemas/impact-partners.js'

const wireImages = (images: PartnerImages) => ({
  ...(images.logos ? { logos: images.logos.map((i) => ({ ...i })) } : {}),
  ...(images.thumbnails ? { thumbnails: images.thumbnails.map((i) => ({ ...i })) } : {}),
  ...(images.backgrounds ? { backgrounds: images.backgrounds.map((i) => ({ ...i })) } : {}),
})

export const presentCataloguePartner = (p: CataloguePartner): CataloguePartnerBody => ({
  id: p.id,
  name: p.name,
  shortDescription: p.shortDescription,
  longDescription: p.longDescription,
  logo: p.images.logos?.[0]?.path ?? null,
  website: p.website,
  images: wireImages(p.images),
})

export const presentCatalogueProject = (p: CreditProject): CatalogueProjectBody => ({
  id: p.id,
  impactPartnerId: p.impactPartnerId,
  name: p.name,
  shortDescription: p.shortDescription,
  type: p.type,
  location: { countryCode: p.location.countryCode, state: p.location.state },
  unit: { description: 'tCO2e', price: Number(p.price), currencyCode: p.priceCurrency },
})
