// Hub users, their sessions, one-time set-password tokens, recovery codes, failed sign-in counters and e-mails.
import { sql, type Kysely } from 'kysely'
import type { Database, HubSessionsTable, UsersTable } from '../database.js'
import type { Role } from '../../domain/permissions.js'

export interface User {
  id: string
  organisationId: string
  email: string
  role: Role
  passwordHash: string | null
  passwordSetAt: Date | null
  totpSecret: string | null
  totpEnabledAt: Date | null
  totpPendingSecret: string | null
  totpLastStep: number | null
  createdAt: Date
  updatedAt: Date
}

type UserRow = { [K in keyof UsersTable]: UsersTable[K] extends { __select__: infer S } ? S : UsersTable[K] }

const userFromRow = (row: UserRow): User => ({
  id: row.id,
  organisationId: row.organisation_id,
  email: row.email,
  role: row.role,
  passwordHash: row.password_hash,
  passwordSetAt: row.password_set_at,
  totpSecret: row.totp_secret,
  totpEnabledAt: row.totp_enabled_at,
  totpPendingSecret: row.totp_pending_secret,
  totpLastStep: row.totp_last_step === null ? null : Number(row.totp_last_step),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
})

export async function insertUser(
  db: Kysely<Database>,
  user: Pick<User, 'id' | 'organisationId' | 'email' | 'role' | 'createdAt'>,
): Promise<User | undefined> {
  const row = await db
    .insertInto('users')
    .values({
      id: user.id,
      organisation_id: user.organisationId,
      email: user.email,
      role: user.role,
      created_at: user.createdAt,
      updated_at: user.createdAt,
    })
    .onConflict((oc) => oc.column('email').doNothing())
    .returningAll()
    .executeTakeFirst()
  return row && userFromRow(row)
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst()
  return row && userFromRow(row)
}

/** A user by e-mail (lower-case), only while their organisation and every one above it is active. */
export async function findActiveUserByEmail(db: Kysely<Database>, email: string): Promise<User | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', email)
    // A SQL function (migrations/2026_11_24_001510): the walk up the tree is a recursive CTE.
    .where(sql<boolean>`organisation_active(organisation_id)`)
    .executeTakeFirst()
  return row && userFromRow(row)
}

export async function findUsersOfOrganisation(db: Kysely<Database>, organisationId: string): Promise<User[]> {
  const rows = await db.selectFrom('users').selectAll().where('organisation_id', '=', organisationId).orderBy('email').execute()
  return rows.map(userFromRow)
}

export async function countAdmins(db: Kysely<Database>, organisationId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('organisation_id', '=', organisationId)
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export type UserChange = Partial<{
  role: Role
  passwordHash: string
  passwordSetAt: Date
  totpSecret: string | null
  totpEnabledAt: Date | null
  totpPendingSecret: string | null
  totpLastStep: number | null
}>

export async function updateUser(db: Kysely<Database>, id: string, change: UserChange, now: Date): Promise<User | undefined> {
  const row = await db
    .updateTable('users')
    .set({
      updated_at: now,
      ...(change.role === undefined ? {} : { role: change.role }),
      ...(change.passwordHash === undefined ? {} : { password_hash: change.passwordHash }),
      ...(change.passwordSetAt === undefined ? {} : { password_set_at: change.passwordSetAt }),
      ...(change.totpSecret === undefined ? {} : { totp_secret: change.totpSecret }),
      ...(change.totpEnabledAt === undefined ? {} : { totp_enabled_at: change.totpEnabledAt }),
      ...(change.totpPendingSecret === undefined ? {} : { totp_pending_secret: change.totpPendingSecret }),
      ...(change.totpLastStep === undefined ? {} : { totp_last_step: change.totpLastStep }),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
  return row && userFromRow(row)
}

/** Accepts a TOTP time step once: true when `step` is later than the last one accepted (set atomically). */
export async function claimTotpStep(db: Kysely<Database>, id: string, step: number): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', String(step))]))
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function deleteUser(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute()
}

// ---------------------------------------------------------------------------------------------------------------
// Sessions

export type HubSessionStage = HubSessionsTable['stage']

export interface HubSession {
  id: string
  userId: string
  csrfToken: string
  stage: HubSessionStage
  createdAt: Date
  lastSeenAt: Date
  expiresAt: Date
}

export async function insertHubSession(
  db: Kysely<Database>,
  session: HubSession & { tokenHash: Uint8Array; ip: string | null; userAgent: string | null },
): Promise<void> {
  await db
    .insertInto('hub_sessions')
    .values({
      id: session.id,
      user_id: session.userId,
      token_hash: session.tokenHash,
      csrf_token: session.csrfToken,
      stage: session.stage,
      ip: session.ip,
      user_agent: session.userAgent?.slice(0, 300) ?? null,
      created_at: session.createdAt,
      last_seen_at: session.lastSeenAt,
      expires_at: session.expiresAt,
    })
    .execute()
}

/** A session by its token's hash with its user, while the user's organisation tree is active. */
export async function findHubSession(
  db: Kysely<Database>,
  tokenHash: Uint8Array,
): Promise<{ session: HubSession; user: User } | undefined> {
  const row = await db
    .selectFrom('hub_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .selectAll('u')
    .select(['s.id as session_id', 's.csrf_token', 's.stage', 's.created_at as session_created_at', 's.last_seen_at', 's.expires_at'])
    .where('s.token_hash', '=', tokenHash)
    .where(sql<boolean>`organisation_active(u.organisation_id)`)
    .executeTakeFirst()
  if (!row) return undefined
  return {
    session: {
      id: row.session_id,
      userId: row.id,
      csrfToken: row.csrf_token,
      stage: row.stage,
      createdAt: row.session_created_at,
      lastSeenAt: row.last_seen_at,
      expiresAt: row.expires_at,
    },
    user: userFromRow(row),
  }
}

export async function touchHubSession(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db.updateTable('hub_sessions').set({ last_seen_at: now }).where('id', '=', id).execute()
}

export async function deleteHubSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('hub_sessions').where('id', '=', id).execute()
}

/** Ends every other session of the user and makes `keepId` a full session. */
export async function keepOnlyHubSession(db: Kysely<Database>, userId: string, keepId: string): Promise<void> {
  await db.deleteFrom('hub_sessions').where('user_id', '=', userId).where('id', '!=', keepId).execute()
  await db.updateTable('hub_sessions').set({ stage: 'active' }).where('id', '=', keepId).execute()
}

export async function deleteHubSessionsOfUser(db: Kysely<Database>, userId: string): Promise<number> {
  const result = await db.deleteFrom('hub_sessions').where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows)
}

// ---------------------------------------------------------------------------------------------------------------
// Set-password tokens and recovery codes

export async function insertPasswordToken(
  db: Kysely<Database>,
  token: { id: string; userId: string; tokenHash: Uint8Array; createdAt: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('hub_password_tokens')
    .values({ id: token.id, user_id: token.userId, token_hash: token.tokenHash, created_at: token.createdAt, expires_at: token.expiresAt })
    .execute()
}

/** The user of a token that is unused and unexpired at `now` (read only: use it with usePasswordToken). */
export async function findPasswordTokenUser(db: Kysely<Database>, tokenHash: Uint8Array, now: Date): Promise<User | undefined> {
  const row = await db
    .selectFrom('hub_password_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .selectAll('u')
    .where('t.token_hash', '=', tokenHash)
    .where('t.used_at', 'is', null)
    .where('t.expires_at', '>', now)
    .executeTakeFirst()
  return row && userFromRow(row)
}

/** Marks an unused, unexpired token used; its user id, or undefined (one use, even when two requests race). */
export async function usePasswordToken(db: Kysely<Database>, tokenHash: Uint8Array, now: Date): Promise<string | undefined> {
  const row = await db
    .updateTable('hub_password_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst()
  return row?.user_id
}

export async function replaceRecoveryCodes(db: Kysely<Database>, userId: string, codeHashes: readonly Uint8Array[]): Promise<void> {
  await db.deleteFrom('hub_recovery_codes').where('user_id', '=', userId).execute()
  if (codeHashes.length > 0) {
    await db
      .insertInto('hub_recovery_codes')
      .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash })))
      .execute()
  }
}

/** Uses an unused recovery code of the user; true when there was one. */
export async function useRecoveryCode(db: Kysely<Database>, userId: string, codeHash: Uint8Array, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('hub_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}

export async function countUnusedRecoveryCodes(db: Kysely<Database>, userId: string): Promise<number> {
  const row = await db
    .selectFrom('hub_recovery_codes')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

// ---------------------------------------------------------------------------------------------------------------
// Failed sign-ins (without Redis)

/** Counts a failure for each key; returns each key's count and its previous last failure. Raw SQL: an upsert that reads the old row. */
export async function recordSignInFailures(db: Kysely<Database>, keys: readonly string[], now: Date, expiresAt: Date): Promise<void> {
  for (const key of keys) {
    await db
      .insertInto('hub_sign_in_failures')
      .values({ key, failures: 1, last_failure_at: now, expires_at: expiresAt })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          // A counter past its window starts again at one.
          failures: sql<number>`CASE WHEN hub_sign_in_failures.expires_at <= ${now} THEN 1 ELSE hub_sign_in_failures.failures + 1 END`,
          last_failure_at: now,
          expires_at: expiresAt,
        }),
      )
      .execute()
  }
}

export async function findSignInFailures(
  db: Kysely<Database>,
  keys: readonly string[],
  now: Date,
): Promise<{ key: string; failures: number; lastFailureAt: Date }[]> {
  if (keys.length === 0) return []
  const rows = await db
    .selectFrom('hub_sign_in_failures')
    .select(['key', 'failures', 'last_failure_at'])
    .where('key', 'in', keys)
    .where('expires_at', '>', now)
    .execute()
  return rows.map((r) => ({ key: r.key, failures: r.failures, lastFailureAt: r.last_failure_at }))
}

export async function clearSignInFailures(db: Kysely<Database>, key: string): Promise<void> {
  await db.deleteFrom('hub_sign_in_failures').where('key', '=', key).execute()
}

// ---------------------------------------------------------------------------------------------------------------
// The e-mail outbox

export async function insertHubEmail(
  db: Kysely<Database>,
  email: { id: string; to: string; subject: string; body: string; now: Date },
): Promise<void> {
  await db
    .insertInto('hub_emails')
    .values({
      id: email.id,
      to_address: email.to,
      subject: email.subject,
      body: email.body,
      next_attempt_at: email.now,
      created_at: email.now,
    })
    .execute()
}

export interface DueHubEmail {
  id: string
  to: string
  subject: string
  body: string
  attempts: number
}

/** Claims due e-mails (SKIP LOCKED, leased), as claimDueReceipts does. Raw SQL: UPDATE … FOR UPDATE SKIP LOCKED. */
export async function claimDueHubEmails(db: Kysely<Database>, now: Date, leaseUntil: Date, limit: number): Promise<DueHubEmail[]> {
  const { rows } = await sql<{ id: string; to_address: string; subject: string; body: string; attempts: number }>`
    UPDATE hub_emails SET locked_until = ${leaseUntil}, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM hub_emails
      WHERE status = 'pending' AND next_attempt_at <= ${now} AND (locked_until IS NULL OR locked_until <= ${now})
      ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING id, to_address, subject, body, attempts`.execute(db)
  return rows.map((r) => ({ id: r.id, to: r.to_address, subject: r.subject, body: r.body, attempts: r.attempts }))
}

/** Sent: the body (which holds a one-time link) is emptied. */
export async function markHubEmailSent(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('hub_emails')
    .set({ status: 'sent', sent_at: now, locked_until: null, last_error: null, body: '' })
    .where('id', '=', id)
    .execute()
}

export async function markHubEmailFailed(
  db: Kysely<Database>,
  id: string,
  error: string,
  next: { retryAt: Date } | { giveUp: true },
): Promise<void> {
  await db
    .updateTable('hub_emails')
    .set({
      last_error: error.slice(0, 1000),
      locked_until: null,
      ...('giveUp' in next ? { status: 'failed' as const, body: '' } : { next_attempt_at: next.retryAt }),
    })
    .where('id', '=', id)
    .execute()
}
