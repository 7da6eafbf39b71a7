// API keys: ck_<live|test>_<40 base62 chars> (~238 bits), shown once, stored as SHA-256 with a short visible prefix.
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../db/database.js'
import { findKeyByPrefix, findKeysByOrganisation, insertApiKey, revokeKeyByPrefix } from '../db/repositories/api-keys.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { AppError, notFound } from '../errors.js'

export type KeyMode = 'live' | 'test'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const KEY_BODY_LENGTH = 40
/** Characters of the key body kept visible in the prefix, for support ("ck_live_" + 8). */
const VISIBLE_BODY_CHARS = 8
export const API_KEY_PATTERN = /^ck_(live|test)_[0-9A-Za-z]{32,128}$/

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62]
    }
  }
  return out
}

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

export interface GeneratedKey {
  key: string
  hash: Buffer
  prefix: string
}

export function generateApiKey(mode: KeyMode): GeneratedKey {
  const body = randomBase62(KEY_BODY_LENGTH)
  const key = `ck_${mode}_${body}`
  return { key, hash: sha256(key), prefix: `ck_${mode}_${body.slice(0, VISIBLE_BODY_CHARS)}` }
}

export interface ApiKeySummary {
  id: string
  organisationId: string
  mode: KeyMode
  prefix: string
  createdAt: string
  revokedAt: string | null
}

const toSummary = (row: ApiKeyRow): ApiKeySummary => ({
  id: row.id,
  organisationId: row.organisation_id,
  mode: row.mode,
  prefix: row.prefix,
  createdAt: row.created_at.toISOString(),
  revokedAt: row.revoked_at ? row.revoked_at.toISOString() : null,
})

/** Creates a key for an existing organisation; the full key is returned here and never again. */
export async function createApiKey(
  db: Kysely<Database>,
  organisationId: string,
  mode: KeyMode,
  now: Date,
): Promise<ApiKeySummary & { apiKey: string }> {
  if (!(await findOrganisationById(db, organisationId))) throw notFound('organisation')
  const generated = generateApiKey(mode)
  const row = await insertApiKey(db, {
    id: randomUUID(),
    organisation_id: organisationId,
    mode,
    key_hash: generated.hash,
    prefix: generated.prefix,
    created_at: now,
  })
  return { ...toSummary(row), apiKey: generated.key }
}

export async function listApiKeys(db: Kysely<Database>, organisationId: string): Promise<ApiKeySummary[]> {
  if (!(await findOrganisationById(db, organisationId))) throw notFound('organisation')
  return (await findKeysByOrganisation(db, organisationId)).map(toSummary)
}

export async function revokeApiKey(db: Kysely<Database>, prefix: string, now: Date): Promise<ApiKeySummary> {
  const revoked = await revokeKeyByPrefix(db, prefix, now)
  if (revoked) return toSummary(revoked)
  const existing = await findKeyByPrefix(db, prefix)
  if (!existing) throw notFound('api key')
  throw new AppError('CONFLICT', 'api key is already revoked')
}
