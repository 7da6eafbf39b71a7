// API keys: stored as the SHA-256 of the full key with a short visible prefix; never the key itself.
import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../database.js'

export type KeyMode = 'live' | 'test'

export interface ApiKey {
  id: string
  organisationId: string
  mode: KeyMode
  prefix: string
  createdAt: Date
  revokedAt: Date | null
}

const apiKeyFromRow = (row: ApiKeyRow): ApiKey => ({
  id: row.id,
  organisationId: row.organisation_id,
  mode: row.mode,
  prefix: row.prefix,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
})

export async function insertApiKey(db: Kysely<Database>, key: Omit<ApiKey, 'revokedAt'>, keyHash: Buffer): Promise<ApiKey> {
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

/** An unrevoked key of an active organisation, by the SHA-256 of the full key. */
export async function findActiveKeyByHash(
  db: Kysely<Database>,
  keyHash: Uint8Array,
): Promise<Pick<ApiKey, 'id' | 'organisationId' | 'mode'> | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('organisations as o', 'o.id', 'k.organisation_id')
    .select(['k.id', 'k.organisation_id', 'k.mode'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .where('o.status', '=', 'active')
    .executeTakeFirst()
  return row && { id: row.id, organisationId: row.organisation_id, mode: row.mode }
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

export async function revokeKeyByPrefix(db: Kysely<Database>, prefix: string, now: Date): Promise<ApiKey | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('prefix', '=', prefix)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
  return row && apiKeyFromRow(row)
}

export async function findKeyByPrefix(db: Kysely<Database>, prefix: string): Promise<ApiKey | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst()
  return row && apiKeyFromRow(row)
}
