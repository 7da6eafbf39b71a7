// API keys: ck_<live|test>_<40 base62 chars> (~238 bits), shown once, stored as SHA-256 with a short visible prefix.
// Operators manage keys with the CLI; an API key manages the keys of its own organisation tree (as a platform
// manages its merchants'). Rotation issues a new key and lets the old one work until its expiry, then it is
// refused like a revoked key.
import { hash, randomFillSync } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Clock } from '../clock.js'
import type { Database } from '../db/database.js'
import {
  findKeyById,
  findKeyByPrefix,
  findKeysByOrganisation,
  insertApiKey,
  markKeyRotated,
  revokeKey,
  type ApiKey,
  type KeyMode,
} from '../db/repositories/api-keys.js'
import { findOrganisationById } from '../db/repositories/organisations.js'
import { AppError, notFound } from '../errors.js'
import { OPERATOR_ACTOR, type AccessResolver, type Principal } from './access.js'
import { recordAudit } from './audit.js'
import { newId } from '../ids.js'
import { inTransaction } from './transaction.js'

export type { ApiKey, KeyMode }

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const KEY_BODY_LENGTH = 40
/** Characters of the key body kept visible in the prefix, for support ("ck_live_" + 8). */
const VISIBLE_BODY_CHARS = 8
export const API_KEY_PATTERN = /^ck_(live|test)_[0-9A-Za-z]{32,128}$/
export const API_KEY_PREFIX_PATTERN = /^ck_(live|test)_[0-9A-Za-z]{8}$/

/** How long a rotated key keeps working by default (Stripe's default expiry for a rolled key is similar). */
export const DEFAULT_EXPIRE_OLD_IN_SECONDS = 86_400
/** The longest grace period a rotated key may get: 30 days. */
export const MAX_EXPIRE_OLD_IN_SECONDS = 2_592_000

// Secrets draw their bytes from one CSPRNG buffer, refilled when used up: one call to the generator per ~85 session
// secrets instead of one per secret (a call costs microseconds, and a session makes two). Every byte is handed out
// once and zeroed as it is read, so the buffer keeps no byte of a secret already made.
const pool = Buffer.alloc(4096)
let poolAt = pool.length

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  const byte = pool[poolAt] as number
  pool[poolAt++] = 0
  return byte
}

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    const byte = randomByte()
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

// crypto.hash: one call instead of a Hash object (every authenticated request hashes its bearer token).
export const sha256 = (value: string): Buffer => hash('sha256', value, 'buffer')

/** SHA-256 as hex: what a request's bearer token is hashed to (a third of the time of a Buffer's, on the hot path). */
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex')

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

/** A key just issued: the record, and the full key, returned here and never again. */
export interface IssuedKey {
  key: ApiKey
  apiKey: string
}

/** A rotation: the new key (shown once) and the old key with the expiry it now has. */
export interface RotatedKey extends IssuedKey {
  previous: ApiKey
}

async function issueKey(db: Kysely<Database>, organisationId: string, mode: KeyMode, now: Date): Promise<IssuedKey> {
  const generated = generateApiKey(mode)
  const key = await insertApiKey(db, { id: newId(), organisationId, mode, prefix: generated.prefix, createdAt: now }, generated.hash)
  return { key, apiKey: generated.key }
}

function assertExpiryInRange(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_EXPIRE_OLD_IN_SECONDS) {
    // Callers validate first (the route's schema, the CLI's arguments): reaching this is a bug.
    throw new RangeError(`expireOldInSeconds must be an integer from 0 to ${MAX_EXPIRE_OLD_IN_SECONDS}`)
  }
}

/** Why a key could not be rotated, read after the conditional update found nothing to change. */
function rotationConflict(key: ApiKey, now: Date): AppError {
  if (key.replacedById !== null && key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now)) {
    return new AppError('API_KEY_ALREADY_ROTATED', 'api key was already rotated; rotate its replacement instead', [
      { path: '/id', message: `was replaced by key ${key.replacedById}` },
    ])
  }
  return new AppError('API_KEY_INACTIVE', 'api key is revoked or expired and cannot be rotated; create a new key instead')
}

/** Who changes keys, for the audit log. */
type By = Pick<Principal, 'actor' | 'ip'>
const OPERATOR: By = { actor: OPERATOR_ACTOR, ip: null }

/**
 * The rotation itself: a new key of the same organisation and mode, and the old key's expiry, in one transaction
 * with its audit event.
 */
async function rotateKey(
  db: Kysely<Database>,
  by: By,
  old: ApiKey,
  expireOldInSeconds: number,
  now: Date,
): Promise<RotatedKey & { previousHash: Uint8Array }> {
  assertExpiryInRange(expireOldInSeconds)
  return db.transaction().execute(async (trx) => {
    const issued = await issueKey(trx, old.organisationId, old.mode, now)
    const expiresAt = new Date(now.getTime() + expireOldInSeconds * 1000)
    const changed = await markKeyRotated(trx, old.id, { replacedById: issued.key.id, expiresAt }, now)
    if (!changed) throw rotationConflict((await findKeyById(trx, old.id)) ?? old, now)
    await recordAudit(
      trx,
      by,
      [
        {
          type: 'api_key.rotated',
          organisationId: old.organisationId,
          changes: {
            keyId: old.id,
            prefix: old.prefix,
            expiresAt: { from: old.expiresAt, to: expiresAt },
            replacedBy: { keyId: issued.key.id, prefix: issued.key.prefix },
          },
        },
      ],
      now,
    )
    return { ...issued, previous: changed.key, previousHash: changed.keyHash }
  })
}

/** A new key with its audit event, in one transaction. */
function issueAuditedKey(db: Kysely<Database>, by: By, organisationId: string, mode: KeyMode, now: Date): Promise<IssuedKey> {
  return inTransaction(db, async (trx) => {
    const issued = await issueKey(trx, organisationId, mode, now)
    await recordAudit(
      trx,
      by,
      [{ type: 'api_key.created', organisationId, changes: { keyId: issued.key.id, prefix: issued.key.prefix, mode } }],
      now,
    )
    return issued
  })
}

/** Revokes a key that works now, with its audit event; undefined when it does not (already revoked or expired). */
function revokeAuditedKey(db: Kysely<Database>, by: By, ref: { id: string } | { prefix: string }, now: Date) {
  return db.transaction().execute(async (trx) => {
    const revoked = await revokeKey(trx, ref, now)
    if (revoked) {
      const { key } = revoked
      await recordAudit(
        trx,
        by,
        [{ type: 'api_key.revoked', organisationId: key.organisationId, changes: { keyId: key.id, prefix: key.prefix } }],
        now,
      )
    }
    return revoked
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Operator commands (CLI)

/** Creates a key for an existing organisation; the full key is returned here and never again. */
export async function createApiKey(db: Kysely<Database>, organisationId: string, mode: KeyMode, now: Date): Promise<IssuedKey> {
  if (!(await findOrganisationById(db, organisationId))) throw notFound('organisation')
  return issueAuditedKey(db, OPERATOR, organisationId, mode, now)
}

export async function listApiKeys(db: Kysely<Database>, organisationId: string): Promise<ApiKey[]> {
  if (!(await findOrganisationById(db, organisationId))) throw notFound('organisation')
  return findKeysByOrganisation(db, organisationId)
}

export async function revokeApiKey(db: Kysely<Database>, prefix: string, now: Date): Promise<ApiKey> {
  const revoked = await revokeAuditedKey(db, OPERATOR, { prefix }, now)
  if (revoked) return revoked.key
  const existing = await findKeyByPrefix(db, prefix)
  if (!existing) throw notFound('api key')
  throw new AppError('API_KEY_ALREADY_REVOKED', 'api key is already revoked or expired')
}

/** Rotates a key named by its id or its visible prefix; the old key works for `expireOldInSeconds` more. */
export async function rotateApiKeyAsOperator(
  db: Kysely<Database>,
  input: { key: string; expireOldInSeconds: number },
  now: Date,
): Promise<RotatedKey> {
  const old = API_KEY_PREFIX_PATTERN.test(input.key) ? await findKeyByPrefix(db, input.key) : await findKeyById(db, input.key)
  if (!old) throw notFound('api key')
  const rotated = await rotateKey(db, OPERATOR, old, input.expireOldInSeconds, now)
  return { key: rotated.key, apiKey: rotated.apiKey, previous: rotated.previous }
}

// ---------------------------------------------------------------------------------------------------------------
// Request use cases: an API key manages the keys of its organisation tree

export interface ApiKeyDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  readonly clock: Clock
}

/** A key of the caller's tree; any other key (or none) is "not found", so other trees' keys are not revealed. */
async function keyOfTree(deps: Pick<ApiKeyDeps, 'db' | 'access'>, principal: Principal, id: string): Promise<ApiKey> {
  const key = await findKeyById(deps.db, id)
  if (!key || !(await deps.access.canSee(principal, key.organisationId))) throw notFound('api key')
  return key
}

/** A new key for an organisation of the caller's tree (FORBIDDEN outside it); mode defaults to the caller's. */
export async function issueApiKey(
  deps: ApiKeyDeps,
  principal: Principal,
  input: { organisationId: string; mode?: KeyMode | undefined },
): Promise<IssuedKey> {
  await deps.access.assertCanActOn(principal, input.organisationId)
  return issueAuditedKey(deps.db, principal, input.organisationId, input.mode ?? principal.mode, deps.clock())
}

/** The keys of an organisation of the caller's tree (its own by default), without secrets. */
export async function listOrganisationApiKeys(
  deps: Pick<ApiKeyDeps, 'db' | 'access'>,
  principal: Principal,
  organisationId: string = principal.organisationId,
): Promise<ApiKey[]> {
  await deps.access.assertCanActOn(principal, organisationId, '/querystring/organisationId')
  return findKeysByOrganisation(deps.db, organisationId)
}

/**
 * Rotates a key of the caller's tree (the caller's own key included): a new key, shown once, and the old key
 * working until now + expireOldInSeconds (0 = it stops now). Revoked or expired → API_KEY_INACTIVE; already
 * rotated → API_KEY_ALREADY_ROTATED.
 */
export async function rotateApiKey(
  deps: ApiKeyDeps,
  principal: Principal,
  input: { keyId: string; expireOldInSeconds?: number | undefined },
): Promise<RotatedKey> {
  const old = await keyOfTree(deps, principal, input.keyId)
  const rotated = await rotateKey(deps.db, principal, old, input.expireOldInSeconds ?? DEFAULT_EXPIRE_OLD_IN_SECONDS, deps.clock())
  deps.access.forgetKey(rotated.previousHash)
  return { key: rotated.key, apiKey: rotated.apiKey, previous: rotated.previous }
}

/** Revokes a key of the caller's tree now (a rotated key's grace period included); again → API_KEY_ALREADY_REVOKED. */
export async function revokeApiKeyOfTree(deps: ApiKeyDeps, principal: Principal, keyId: string): Promise<ApiKey> {
  await keyOfTree(deps, principal, keyId)
  const revoked = await revokeAuditedKey(deps.db, principal, { id: keyId }, deps.clock())
  if (!revoked) throw new AppError('API_KEY_ALREADY_REVOKED', 'api key is already revoked or expired')
  deps.access.forgetKey(revoked.keyHash)
  return revoked.key
}
