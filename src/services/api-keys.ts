// API keys: ck_<live|test>_<40 base62 chars> (~238 bits), shown once, stored as SHA-256 with a short visible prefix.
import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../db/database.js'
import {
  findKeyByPrefix,
  findKeysByOrganisation,
  insertApiKey,
  revokeKeyByPrefix,
  type ApiKey,
  type KeyMode,
} from '../db/repositories/api-keys.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { AppError, notFound } from '../errors.js'
import { newId } from '../ids.js'

export type { KeyMode }

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

/** What the CLI prints about a key. */
const toSummary = (key: ApiKey): ApiKeySummary => ({
  id: key.id,
  organisationId: key.organisationId,
  mode: key.mode,
  prefix: key.prefix,
  createdAt: key.createdAt.toISOString(),
  revokedAt: key.revokedAt ? key.revokedAt.toISOString() : null,
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
  const key = await insertApiKey(db, { id: newId(), organisationId, mode, prefix: generated.prefix, createdAt: now }, generated.hash)
  return { ...toSummary(key), apiKey: generated.key }
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
  throw new AppError('API_KEY_ALREADY_REVOKED', 'api key is already revoked')
}
