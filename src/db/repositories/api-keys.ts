// API keys: stored as the SHA-256 of the full key with a short visible prefix; never the key itself.
import { sql, type Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../database.js'

export type KeyMode = 'live' | 'test'

export interface ApiKey {
  id: string
  organisationId: string
  mode: KeyMode
  prefix: string
  createdAt: Date
  revokedAt: Date | null
  /** After this instant the key authenticates as revoked (set when the key is rotated). */
  expiresAt: Date | null
  /** The key that replaced this one, once rotated. */
  replacedById: string | null
  /** When the key last authenticated, to the minute; null if never. */
  lastUsedAt: Date | null
}

/** A key as authentication sees it: who it is, and until when it works (null = until revoked). */
export type AuthenticatedKey = Pick<ApiKey, 'id' | 'organisationId' | 'mode' | 'prefix' | 'expiresAt'>

/** A key whose state just changed, with its hash so that an in-process cache entry can be dropped. */
export interface ChangedKey {
  key: ApiKey
  keyHash: Uint8Array
}

const apiKeyFromRow = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  organisationId: row.organisation_id,
  mode: row.mode,
  prefix: row.prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  expiresAt: row.expires_at,
  replacedById: row.replaced_by_id,
  lastUsedAt: row.last_used_at,
})

const changedKeyFromRow = (row: ApiKeyRow): ChangedKey => ({ key: apiKeyFromRow(row), keyHash: row.key_hash })

export async function insertApiKey(
  db: Kysely<Database>,
  key: Omit<ApiKey, 'revokedAt' | 'expiresAt' | 'replacedById' | 'lastUsedAt'>,
  keyHash: Buffer,
): Promise<ApiKey> {
  const row = await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      organisation_id: key.organisationId,
      mode: key.mode,
      key_hash: keyHash,
      prefix: key.prefix,
      created_at: key.createdAt,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
  return apiKeyFromRow(row)
}

/**
 * An unrevoked key of an active organisation (every organisation above it active too), by the SHA-256 of the full
 * key, with its expiry: the caller checks the expiry on every request (so a cached key still stops at its exact
 * expiry).
 */
export async function findKeyForAuthentication(db: Kysely<Database>, keyHash: Uint8Array): Promise<AuthenticatedKey | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('organisations as o', 'o.id', 'k.organisation_id')
    .select(['k.id', 'k.organisation_id', 'k.mode', 'k.prefix', 'k.expires_at'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .where('o.status', '=', 'active')
    // A SQL function (migrations/2026_11_24_001510): the walk up the tree is a recursive CTE.
    .where(sql<boolean>`organisation_active(k.organisation_id)`)
    .executeTakeFirst()
  return row && { id: row.id, organisationId: row.organisation_id, mode: row.mode, prefix: row.prefix, expiresAt: row.expires_at }
}

/** Records that a key authenticated at `now`, unless it was recorded less than `minIntervalMs` before. */
export async function touchKeyLastUsed(db: Kysely<Database>, id: string, now: Date, minIntervalMs: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', new Date(now.getTime() - minIntervalMs))]))
    .execute()
}

export async function findKeysByOrganisation(db: Kysely<Database>, organisationId: string): Promise<ApiKey[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  return rows.map(apiKeyFromRow)
}

export async function findKeyById(db: Kysely<Database>, id: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
  return row && apiKeyFromRow(row)
}

export async function findKeyByPrefix(db: Kysely<Database>, prefix: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst()
  return row && apiKeyFromRow(row)
}

/** Revokes a key that still works at `now` (unrevoked, unexpired); undefined when there is none. */
export async function revokeKey(
  db: Kysely<Database>,
  ref: { id: string } | { prefix: string },
  now: Date,
): Promise<ChangedKey | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where((eb) => ('id' in ref ? eb('id', '=', ref.id) : eb('prefix', '=', ref.prefix)))
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .returningAll()
    .executeTakeFirst()
  return row && changedKeyFromRow(row)
}

/**
 * Marks a key as replaced by `replacedById`, working until `expiresAt`, if at `now` it is unrevoked, unexpired and
 * not already rotated (one conditional statement, so concurrent rotations of one key produce one replacement).
 */
export async function markKeyRotated(
  db: Kysely<Database>,
  id: string,
  change: { replacedById: string; expiresAt: Date },
  now: Date,
): Promise<ChangedKey | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ replaced_by_id: change.replacedById, expires_at: change.expiresAt })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('replaced_by_id', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .returningAll()
    .executeTakeFirst()
  return row && changedKeyFromRow(row)
}
