// The session read the SDK renders: GET /v3/{post-purchase|checkout}/sessions/:id (SdkCarbonSessionSchema,
// SdkNatureSessionSchema in src/http/schemas/sessions.ts). The body is checked before anything reads it.
import { LoadFailure } from './errors.js'

export interface Image {
  path: string
  type: string
  width: number
  height: number
}

export interface ImpactPartner {
  id: string
  name: string
  shortDescription: string
  images: { logos?: Image[]; thumbnails?: Image[]; backgrounds?: Image[] }
}

export interface Equivalent {
  key: string
  value: number
  description: string
}

export interface Rates {
  impact: number
  impactTax: number
  serviceFee: number
  serviceFeeTax: number
}

/** credits.projects: the projects the quote priced, in its order (absent from reads of older deployments). */
export interface Project {
  id: string
  name: string
  impactPartnerId?: string
  shortDescription?: string
  /** countryCode is null for a project not tied to one country; countryName is in the response's locale. */
  location: { countryCode: string | null; countryName?: string | null; state?: string | null }
}

/** What the US disclosure states (absent from reads of older deployments: the widget then uses ekko's figures). */
export interface Disclosure {
  /** Who collects the contributions (the deployment's operator), or null. */
  collectingParty: string | null
  /** Contributions reach the partners within min to max days. */
  payoutDays: { min: number; max: number }
}

interface SessionBase {
  sessionId: string
  kind: 'post-purchase' | 'checkout'
  sdkVariant: 'embedded' | 'takeover' | null
  expiresAt: string
  quoteId: string
  currencyCode: string
  locale: string
  disclosure?: Disclosure
  contribution: { effectiveRates: Rates; impactPartners: ImpactPartner[] }
}

export interface CarbonSession extends SessionBase {
  impactType: 'carbon'
  footprint: { co2eGrams: number; co2eOunces: number; equivalents: Equivalent[] }
  credits: {
    amounts: { total: number; impact: number; impactTax: number; serviceFee: number; serviceFeeTax: number }
    effectiveRates: Rates
    unit: { description: string; price: number }
    consumerLocationMatchAccuracy: 'state' | 'country' | 'global'
    impactPartners: ImpactPartner[]
    projects?: Project[]
  }
}

export interface NatureSession extends SessionBase {
  impactType: 'nature'
  footprint: { areaSquareMetres: number; areaSquareFeet: number; equivalents: Equivalent[] }
}

export type SdkSession = CarbonSession | NatureSession

type Json = Record<string, unknown>

function bad(path: string): never {
  throw new LoadFailure('api_error', 'invalid_response', `The Canopy API answered with an unexpected session body (at ${path}).`, 200)
}
const object = (value: unknown, path: string): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : bad(path)
const string = (value: unknown, path: string): string => (typeof value === 'string' ? value : bad(path))
const number = (value: unknown, path: string): number => (typeof value === 'number' && Number.isFinite(value) ? value : bad(path))
function array<T>(value: unknown, path: string, item: (v: unknown, p: string) => T): T[] {
  return Array.isArray(value) ? value.map((v, i) => item(v, `${path}/${i}`)) : bad(path)
}

const rates = (value: unknown, path: string): Rates => {
  const r = object(value, path)
  for (const key of ['impact', 'impactTax', 'serviceFee', 'serviceFeeTax']) number(r[key], `${path}/${key}`)
  return r as unknown as Rates
}

const image = (value: unknown, path: string): Image => {
  const i = object(value, path)
  string(i.path, `${path}/path`)
  number(i.width, `${path}/width`)
  number(i.height, `${path}/height`)
  return i as unknown as Image
}

const partner = (value: unknown, path: string): ImpactPartner => {
  const p = object(value, path)
  string(p.id, `${path}/id`)
  string(p.name, `${path}/name`)
  string(p.shortDescription, `${path}/shortDescription`)
  const images = object(p.images ?? {}, `${path}/images`)
  for (const group of ['logos', 'thumbnails', 'backgrounds']) {
    if (images[group] !== undefined) array(images[group], `${path}/images/${group}`, image)
  }
  return { ...p, images } as unknown as ImpactPartner
}

const project = (value: unknown, path: string): Project => {
  const p = object(value, path)
  string(p.name, `${path}/name`)
  const location = object(p.location, `${path}/location`)
  if (location.countryCode !== null) string(location.countryCode, `${path}/location/countryCode`)
  return p as unknown as Project
}

const disclosure = (value: unknown): Disclosure => {
  const d = object(value, '/disclosure')
  if (d.collectingParty !== null) string(d.collectingParty, '/disclosure/collectingParty')
  const days = object(d.payoutDays, '/disclosure/payoutDays')
  number(days.min, '/disclosure/payoutDays/min')
  number(days.max, '/disclosure/payoutDays/max')
  return d as unknown as Disclosure
}

const equivalent = (value: unknown, path: string): Equivalent => {
  const e = object(value, path)
  string(e.description, `${path}/description`)
  return e as unknown as Equivalent
}

/** Checks the fields the widget reads; throws LoadFailure `invalid_response` at the first that is wrong. */
export function parseSession(body: unknown): SdkSession {
  const s = object(body, '')
  for (const key of ['sessionId', 'quoteId', 'locale', 'expiresAt']) string(s[key], `/${key}`)
  if (!/^[A-Z]{3}$/.test(string(s.currencyCode, '/currencyCode'))) bad('/currencyCode')
  if (s.disclosure !== undefined) disclosure(s.disclosure)
  const contribution = object(s.contribution, '/contribution')
  rates(contribution.effectiveRates, '/contribution/effectiveRates')
  array(contribution.impactPartners, '/contribution/impactPartners', partner)
  const footprint = object(s.footprint, '/footprint')
  array(footprint.equivalents, '/footprint/equivalents', equivalent)
  if (s.impactType === 'nature') {
    number(footprint.areaSquareMetres, '/footprint/areaSquareMetres')
    number(footprint.areaSquareFeet, '/footprint/areaSquareFeet')
  } else if (s.impactType === 'carbon') {
    number(footprint.co2eGrams, '/footprint/co2eGrams')
    number(footprint.co2eOunces, '/footprint/co2eOunces')
    const credits = object(s.credits, '/credits')
    number(object(credits.amounts, '/credits/amounts').total, '/credits/amounts/total')
    rates(credits.effectiveRates, '/credits/effectiveRates')
    array(credits.impactPartners, '/credits/impactPartners', partner)
    if (credits.projects !== undefined) array(credits.projects, '/credits/projects', project)
  } else {
    bad('/impactType')
  }
  return s as unknown as SdkSession
}
