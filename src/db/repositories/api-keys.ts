import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database, NewApiKeyRow } from '../database.js'

export async function insertApiKey(db: Kysely<Database>, row: NewApiKeyRow): Promise<ApiKeyRow> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow()
}

export interface ActiveKeyRow {
  id: string
  organisation_id: string
  mode: 'live' | 'test'
}

/** An unrevoked key of an active organisation, by the SHA-256 of the full key. */
export async function findActiveKeyByHash(db: Kysely<Database>, keyHash: Uint8Array): Promise<ActiveKeyRow | undefined> {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('organisations as o', 'o.id', 'k.organisation_id')
    .select(['k.id', 'k.organisation_id', 'k.mode'])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .where('o.status', '=', 'active')
    .executeTakeFirst()
}

export async function findKeysByOrganisation(db: Kysely<Database>, organisationId: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('organisation_id', '=', organisationId).orderBy('created_at').orderBy('id').execute()
}

export async function revokeKeyByPrefix(db: Kysely<Database>, prefix: string, now: Date): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('prefix', '=', prefix)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

export async function findKeyByPrefix(db: Kysely<Database>, prefix: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('prefix', '=', prefix).executeTakeFirst()
}
