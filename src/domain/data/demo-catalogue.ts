// ILLUSTRATIVE demo catalogue (data/SOURCES.md §7): fictional partners and
// type-exemplar projects with indicative prices. Not live offerings; operators import their own.
// The partner images are drawn by scripts/make-demo-images.mjs and served by the API at /demo/images/.
import type { CreditProject, ImpactPartner, PartnerImages } from '../types.js'

const images = (slug: string, groups: readonly ('logos' | 'thumbnails' | 'backgrounds')[]): PartnerImages => {
  const size = { logos: [256, 256], thumbnails: [400, 300], backgrounds: [1600, 900] } as const
  return Object.fromEntries(
    groups.map((group) => [group, [{ path: `/demo/images/${slug}-${group}.png`, type: 'default', width: size[group][0], height: size[group][1] }]]),
  )
}

export const DEMO_PARTNER_IDS = {
  verdantRemovals: 'a70c08e2-740d-4424-a1d9-f0c8daa2f576',
  forestGuardians: 'f56adc20-bb37-4683-ac1e-02e15bcd1a0d',
  durableCarbon: 'e5634ffa-7111-4281-8666-b037ecf09889',
  rewildTrust: '5f2eb30d-97a0-42fe-a570-a00e2ff79cd2',
  oceanCommons: '672ef610-b780-416d-a4e8-b1d50dc79fcd',
} as const

/** Demo impact partners (fictional names): three credits partners, two contribution partners. */
export const DEMO_IMPACT_PARTNERS: readonly ImpactPartner[] = [
  {
    id: DEMO_PARTNER_IDS.verdantRemovals, kind: 'credits', name: 'Verdant Removals (demo)',
    shortDescription: 'Illustrative partner for nature-based carbon removal projects.',
    images: images('verdant-removals', ['logos', 'thumbnails', 'backgrounds']), priority: 30, active: true,
  },
  {
    id: DEMO_PARTNER_IDS.forestGuardians, kind: 'credits', name: 'Forest Guardians (demo)',
    shortDescription: 'Illustrative partner for avoided-emission projects.',
    images: images('forest-guardians', ['logos', 'thumbnails', 'backgrounds']), priority: 20, active: true,
  },
  {
    id: DEMO_PARTNER_IDS.durableCarbon, kind: 'credits', name: 'Durable Carbon (demo)',
    shortDescription: 'Illustrative partner for durable carbon removal.',
    images: images('durable-carbon', ['logos', 'thumbnails']), priority: 10, active: true,
  },
  {
    id: DEMO_PARTNER_IDS.rewildTrust, kind: 'contribution', name: 'Rewild Trust (demo)',
    shortDescription: 'Illustrative charity restoring native habitats.',
    images: images('rewild-trust', ['logos', 'thumbnails']), priority: 20, active: true,
  },
  {
    id: DEMO_PARTNER_IDS.oceanCommons, kind: 'contribution', name: 'Ocean Commons (demo)',
    shortDescription: 'Illustrative charity protecting coastal ecosystems.',
    images: images('ocean-commons', ['logos']), priority: 10, active: true,
  },
]

const project = (
  id: string, impactPartnerId: string, name: string, shortDescription: string,
  countryCode: string | null, price: string, priceCurrency: string, priority: number, state: string | null = null,
): CreditProject => ({
  id, impactPartnerId, name, shortDescription, type: 'carbonCredits',
  location: { countryCode, state }, price, priceCurrency, priority, weight: null, active: true,
})

/**
 * Demo credit projects: the types and countries listed in data/SOURCES.md §7 with its indicative prices
 * per tCO2e (USD, and GBP 23.30 for the UK woodland: the 2023 WCC volume-weighted average).
 */
export const DEMO_CREDIT_PROJECTS: readonly CreditProject[] = [
  project('1bac135c-c299-4e11-9883-d3be61f1e0de', DEMO_PARTNER_IDS.verdantRemovals, 'Agroforestry restoration, Rwanda (demo)',
    'Nature-based removal (ARR, VM0047 type).', 'RWA', '25.00', 'USD', 50),
  project('3293bbcf-7f71-471c-bd6c-b4bb57602af1', DEMO_PARTNER_IDS.verdantRemovals, 'Mangrove restoration, Sri Lanka (demo)',
    'Blue-carbon removal (VM0033 type).', 'LKA', '30.00', 'USD', 40),
  project('88fa3871-7949-49aa-a414-c620f1095eb2', DEMO_PARTNER_IDS.forestGuardians, 'Forest conservation, Kenya (demo)',
    'Nature-based avoidance (REDD+ type).', 'KEN', '10.00', 'USD', 30),
  project('627c99db-0831-4be5-a344-021a5bfe1fb7', DEMO_PARTNER_IDS.forestGuardians, 'Clean cooking, Rwanda (demo)',
    'Avoidance through efficient household stoves (VM0050 type).', 'RWA', '8.00', 'USD', 20),
  project('13756b9a-9d6a-4e2d-ad1f-b88dd0ba9856', DEMO_PARTNER_IDS.verdantRemovals, 'UK woodland creation (demo)',
    'Nature-based removal (Woodland Carbon Code type).', 'GBR', '23.30', 'GBP', 10),
  project('fc21c9f7-42ba-4857-b0f6-8a5931369690', DEMO_PARTNER_IDS.durableCarbon, 'Biochar, durable removal (demo)',
    'Durable removal (biochar type).', null, '150.00', 'USD', 5),
  // Below: the USA by state and Germany, so location matching has something to find (illustrative prices
  // within the §6.1 reforestation range, USD 5–50/t; the German peatland price is an assumption).
  project('0b6f3e0a-5c1d-4b8e-9a57-2f4c1d9e6a11', DEMO_PARTNER_IDS.forestGuardians, 'Family forest management, California (demo)',
    'Improved forest management (IFM type, cf. VM0045).', 'USA', '18.00', 'USD', 45, 'CA'),
  project('6d2a9c47-1e3b-4f5a-8c6d-7b8e9f0a1b22', DEMO_PARTNER_IDS.verdantRemovals, 'Reforestation, Oregon (demo)',
    'Nature-based removal (ARR type).', 'USA', '20.00', 'USD', 35, 'OR'),
  project('9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c33', DEMO_PARTNER_IDS.forestGuardians, 'Landfill gas capture, United States (demo)',
    'Avoidance through methane capture.', 'USA', '6.00', 'USD', 15),
  project('4c3b2a19-0f8e-4d7c-9b6a-5f4e3d2c1b44', DEMO_PARTNER_IDS.verdantRemovals, 'Peatland rewetting, Germany (demo)',
    'Avoidance and removal through rewetted peat soils.', 'DEU', '40.00', 'EUR', 25),
]
