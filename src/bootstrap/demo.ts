// First embedded start: a demo organisation and key, printed once and saved to DATA_DIR/demo-credentials.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import { countOrganisations } from '../db/repositories/organisations.js'
import { demoCatalogue, importCatalogue } from '../services/catalogue.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { createOrganisationWithKey, setAllowedOrigins } from '../services/organisations.js'
import { createUserAsOperator } from '../services/hub/users.js'

export interface DemoCredentials {
  organisationId: string
  apiKey: string
  /** The demo organisation's Hub admin, and the one-time link to set its password (24 h; not saved to the file). */
  hubAdmin?: { email: string; setPasswordUrl: string }
  createdAt: string
  note: string
}

export const demoCredentialsPath = (dataDir: string): string => join(dataDir, 'demo-credentials.json')

/**
 * Creates the demo organisation and loads the illustrative demo catalogue when the database has no
 * organisation yet; returns the credentials when it did.
 */
export const DEMO_ADMIN_EMAIL = 'admin@demo.canopy.invalid'

export async function bootstrapDemo(
  db: Kysely<Database>,
  dataDir: string,
  now: Date,
  publicBaseUrl = 'http://127.0.0.1:3000',
): Promise<DemoCredentials | undefined> {
  if ((await countOrganisations(db)) > 0) return undefined
  await importCatalogue(db, demoCatalogue(), now)
  const { organisation, apiKey } = await createOrganisationWithKey(
    db,
    {
      parentId: null,
      tradingName: 'Blossom & Bloom (demo)',
      legalName: 'Canopy Demo Florist Ltd',
      organisationReference: 'DEMO-001',
      address: { line1: '45 Rosewood Avenue', city: 'London', postalCode: 'SW1A 1AA', countryCode: 'GBR' },
      currencyCode: 'GBP',
      mcc: '5992',
    },
    'test',
    now,
  )
  const credentials: DemoCredentials = {
    organisationId: organisation.id,
    apiKey,
    createdAt: now.toISOString(),
    note: 'Demo organisation of the embedded database (MCC 5992, GBR, GBP). Keep this file private.',
  }
  mkdirSync(dataDir, { recursive: true })
  writeFileSync(demoCredentialsPath(dataDir), `${JSON.stringify({ ...credentials, hubAdminEmail: DEMO_ADMIN_EMAIL }, null, 2)}\n`, {
    mode: 0o600,
  })
  // The Hub's demo admin: the set-password link is printed once and never stored in clear.
  const admin = await createUserAsOperator(
    db,
    { organisationId: organisation.id, email: DEMO_ADMIN_EMAIL, role: 'admin' },
    { now, publicBaseUrl },
  )
  return { ...credentials, hubAdmin: { email: admin.user.email, setPasswordUrl: admin.setPasswordUrl } }
}

export const hasDemoCredentials = (dataDir: string): boolean => existsSync(demoCredentialsPath(dataDir))

/**
 * DEMO_ALLOWED_ORIGINS: adds origins (comma-separated) to the demo organisation's allowed origins, keeping those it
 * has, so that a page there (the demo shop of npm run demo) can read its sessions. Returns the list now in force;
 * undefined when there is no demo organisation in this data directory.
 */
export async function allowDemoOrigins(db: Kysely<Database>, dataDir: string, origins: string, now: Date): Promise<string[] | undefined> {
  if (!hasDemoCredentials(dataDir)) return undefined
  const { organisationId } = JSON.parse(readFileSync(demoCredentialsPath(dataDir), 'utf8')) as DemoCredentials
  const organisation = await findOrganisationById(db, organisationId)
  if (!organisation) return undefined
  const added = origins
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean)
  const result = await setAllowedOrigins(db, { organisationId, allowedOrigins: [...(organisation.allowedOrigins ?? []), ...added] }, now)
  return result.effectiveAllowedOrigins
}
