// Hub sign-in and sessions. Sessions are rows (only their token's SHA-256 is stored) read on every request, so a
// removal, a role change or "sign out everywhere" ends them at once in every process. Idle and absolute timeouts run
// on the app's clock. A second factor (TOTP, or a one-time recovery code) follows the password when the user has one;
// a user whose organisation requires one and who has none may only enrol.
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/database.js'
import { findTotpRequired } from '../../db/repositories/organisations.js'
import {
  claimTotpStep,
  countUnusedRecoveryCodes,
  deleteHubSession,
  deleteHubSessionsOfUser,
  findActiveUserByEmail,
  findHubSession,
  insertHubSession,
  keepOnlyHubSession,
  replaceRecoveryCodes,
  touchHubSession,
  updateUser,
  useRecoveryCode,
  type HubSession,
  type HubSessionStage,
  type User,
} from '../../db/repositories/users.js'
import { AppError } from '../../errors.js'
import { newId } from '../../ids.js'
import type { Actor, Principal } from '../access.js'
import { recordAudit } from '../audit.js'
import {
  newRecoveryCodes,
  newTotpSecret,
  passwordMatches,
  randomToken,
  recoveryCodeHash,
  sha256,
  totpEnrolment,
  totpStep,
} from './credentials.js'
import { throttleKeys, type SignInThrottle } from './throttle.js'
import { normaliseEmail } from './users.js'

export type { HubSession, HubSessionStage }

export interface SignInDeps {
  readonly db: Kysely<Database>
  readonly clock: Clock
  readonly throttle: SignInThrottle
  readonly idleTimeoutMs: number
  readonly absoluteTimeoutMs: number
}

/** A password-only session waiting for its second factor lives this long. */
const SECOND_FACTOR_WINDOW_MS = 5 * 60_000
/** last_seen_at is written at most this often (so an idle session may end up to this much early, never late). */
const TOUCH_EVERY_MS = 60_000

export const userActor = (user: User, sessionId: string): Extract<Actor, { type: 'user' }> => ({
  type: 'user',
  id: user.id,
  label: user.email,
  role: user.role,
  sessionId,
})

/** The principal of a signed-in user: acting on their organisation's tree. */
export const userPrincipal = (user: User, sessionId: string, ip: string): Principal => ({
  organisationId: user.organisationId,
  mode: 'live',
  actor: userActor(user, sessionId),
  ip,
})

export interface StartedSession {
  /** The cookie's value: shown to the browser only. */
  token: string
  session: HubSession
  user: User
}

async function startSession(
  db: Kysely<Database>,
  user: User,
  stage: HubSessionStage,
  client: { ip: string; userAgent: string | null },
  now: Date,
  lifetimeMs: number,
): Promise<StartedSession> {
  const token = randomToken()
  const session: HubSession = {
    id: newId(),
    userId: user.id,
    csrfToken: randomToken(),
    stage,
    createdAt: now,
    lastSeenAt: now,
    expiresAt: new Date(now.getTime() + lifetimeMs),
  }
  await insertHubSession(db, { ...session, tokenHash: sha256(token), ip: client.ip, userAgent: client.userAgent })
  return { token, session, user }
}

const invalidCredentials = () => new AppError('INVALID_CREDENTIALS', 'the e-mail address or the password is not right')

async function assertNotThrottled(deps: SignInDeps, keys: ReturnType<typeof throttleKeys>, now: Date): Promise<void> {
  const waitMs = await deps.throttle.waitMs(keys, now)
  if (waitMs > 0) {
    const error = new AppError('SIGN_IN_THROTTLED', 'too many failed sign-ins: wait a little before trying again')
    error.retryAfterSeconds = Math.ceil(waitMs / 1000)
    throw error
  }
}

/**
 * Step 1: e-mail and password. The same answer (INVALID_CREDENTIALS) for an unknown e-mail, a wrong password and a
 * user without a password, after the same Argon2 work; failures count against the account and the address.
 */
export async function signIn(
  deps: SignInDeps,
  input: { email: string; password: string; ip: string; userAgent: string | null },
): Promise<StartedSession> {
  const now = deps.clock()
  const email = normaliseEmail(input.email)
  const keys = throttleKeys(email, input.ip)
  await assertNotThrottled(deps, keys, now)
  const user = await findActiveUserByEmail(deps.db, email)
  const ok = await passwordMatches(user?.passwordHash ?? null, input.password)
  if (!ok || !user) {
    await deps.throttle.recordFailure(keys, now)
    if (user) {
      await recordAudit(
        deps.db,
        { actor: userActor(user, ''), ip: input.ip },
        [{ type: 'user.sign_in_failed', organisationId: user.organisationId, changes: { reason: 'password' } }],
        now,
      )
    }
    throw invalidCredentials()
  }
  await deps.throttle.recordSuccess(keys)
  const client = { ip: input.ip, userAgent: input.userAgent }
  if (user.totpEnabledAt) return startSession(deps.db, user, 'second_factor', client, now, SECOND_FACTOR_WINDOW_MS)
  const stage = (await findTotpRequired(deps.db, user.organisationId)) ? 'enrol_second_factor' : 'active'
  return deps.db.transaction().execute(async (trx) => {
    const started = await startSession(trx, user, stage, client, now, deps.absoluteTimeoutMs)
    await recordAudit(
      trx,
      { actor: userActor(user, started.session.id), ip: input.ip },
      [
        {
          type: 'user.signed_in',
          organisationId: user.organisationId,
          changes: { secondFactor: stage === 'active' ? 'none' : 'enrolment required' },
        },
      ],
      now,
    )
    return started
  })
}

/** A session by its cookie's token, unless it has ended (idle or absolute timeout: it is deleted then). */
export async function sessionOfToken(deps: SignInDeps, token: string): Promise<{ session: HubSession; user: User } | undefined> {
  if (!/^[\w-]{20,100}$/.test(token)) return undefined
  const found = await findHubSession(deps.db, sha256(token))
  if (!found) return undefined
  const now = deps.clock().getTime()
  const { session } = found
  if (now >= session.expiresAt.getTime() || now - session.lastSeenAt.getTime() >= deps.idleTimeoutMs) {
    await deleteHubSession(deps.db, session.id)
    return undefined
  }
  if (now - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await touchHubSession(deps.db, session.id, new Date(now))
  return found
}

const invalidSecondFactor = () =>
  new AppError('INVALID_SECOND_FACTOR', 'that code is not right, or was already used', [{ path: '/code', message: 'is not a valid code' }])

/** Checks a TOTP code (each time step once) or an unused recovery code of a user; which one it was, or throws. */
async function checkSecondFactor(
  db: Kysely<Database>,
  user: User,
  input: { code?: string | undefined; recoveryCode?: string | undefined },
  now: Date,
) {
  if (input.recoveryCode !== undefined) {
    if (await useRecoveryCode(db, user.id, recoveryCodeHash(input.recoveryCode), now)) return 'recovery_code' as const
    throw new AppError('INVALID_SECOND_FACTOR', 'that recovery code is not right, or was already used', [
      { path: '/recoveryCode', message: 'is not an unused recovery code' },
    ])
  }
  const step = user.totpSecret && input.code !== undefined ? totpStep(user.totpSecret, input.code, now) : undefined
  if (step === undefined || !(await claimTotpStep(db, user.id, step))) throw invalidSecondFactor()
  return 'totp' as const
}

/**
 * Step 2: the TOTP code or a recovery code of the session that passed the password. A new session (a new token)
 * replaces the pending one, so that nothing learnt before the second factor carries over.
 */
export async function completeSecondFactor(
  deps: SignInDeps,
  token: string,
  input: { code?: string | undefined; recoveryCode?: string | undefined; ip: string; userAgent: string | null },
): Promise<StartedSession> {
  const found = await sessionOfToken(deps, token)
  if (!found || found.session.stage !== 'second_factor')
    throw new AppError('UNAUTHORIZED', 'sign in with your e-mail address and password first')
  const { user, session } = found
  const now = deps.clock()
  const keys = throttleKeys(user.email, input.ip)
  await assertNotThrottled(deps, keys, now)
  let factor: 'totp' | 'recovery_code'
  try {
    factor = await checkSecondFactor(deps.db, user, input, now)
  } catch (error) {
    await deps.throttle.recordFailure(keys, now)
    await recordAudit(
      deps.db,
      { actor: userActor(user, session.id), ip: input.ip },
      [{ type: 'user.sign_in_failed', organisationId: user.organisationId, changes: { reason: 'second factor' } }],
      now,
    )
    throw error
  }
  await deps.throttle.recordSuccess(keys)
  return deps.db.transaction().execute(async (trx) => {
    await deleteHubSession(trx, session.id)
    const started = await startSession(trx, user, 'active', input, now, deps.absoluteTimeoutMs)
    const by = { actor: userActor(user, started.session.id), ip: input.ip }
    await recordAudit(
      trx,
      by,
      [
        { type: 'user.signed_in', organisationId: user.organisationId, changes: { secondFactor: factor } },
        ...(factor === 'recovery_code'
          ? [
              {
                type: 'user.recovery_code_used' as const,
                organisationId: user.organisationId,
                changes: { remaining: await countUnusedRecoveryCodes(trx, user.id) },
              },
            ]
          : []),
      ],
      now,
    )
    return started
  })
}

export async function signOut(
  deps: Pick<SignInDeps, 'db' | 'clock'>,
  principal: Principal,
  sessionId: string,
  organisationId: string,
): Promise<void> {
  const now = deps.clock()
  await deps.db.transaction().execute(async (trx) => {
    await deleteHubSession(trx, sessionId)
    await recordAudit(trx, principal, [{ type: 'user.signed_out', organisationId }], now)
  })
}

export async function signOutEverywhere(deps: Pick<SignInDeps, 'db' | 'clock'>, principal: Principal, user: User): Promise<number> {
  const now = deps.clock()
  return deps.db.transaction().execute(async (trx) => {
    const ended = await deleteHubSessionsOfUser(trx, user.id)
    await recordAudit(
      trx,
      principal,
      [{ type: 'user.signed_out_everywhere', organisationId: user.organisationId, changes: { sessions: ended } }],
      now,
    )
    return ended
  })
}

// ---------------------------------------------------------------------------------------------------------------
// The second factor of a signed-in user

/** Starts TOTP enrolment: a new secret (pending until a code confirms it), as text, otpauth URI and QR code. */
export async function startTotpEnrolment(deps: Pick<SignInDeps, 'db' | 'clock'>, user: User) {
  if (user.totpEnabledAt) {
    throw new AppError('SECOND_FACTOR_ALREADY_ENABLED', 'you already sign in with a second factor; turn it off first to enrol again')
  }
  const secret = newTotpSecret()
  await updateUser(deps.db, user.id, { totpPendingSecret: secret }, deps.clock())
  return totpEnrolment(secret, user.email)
}

/**
 * Confirms enrolment with a first code: the factor is on, ten recovery codes are issued (shown once), and a session
 * that was only allowed to enrol becomes a full one.
 */
export async function confirmTotpEnrolment(
  deps: Pick<SignInDeps, 'db' | 'clock'>,
  principal: Principal,
  user: User,
  session: HubSession,
  code: string,
): Promise<string[]> {
  const now = deps.clock()
  const step = user.totpPendingSecret ? totpStep(user.totpPendingSecret, code, now) : undefined
  if (!user.totpPendingSecret || step === undefined) throw invalidSecondFactor()
  const codes = newRecoveryCodes()
  await deps.db.transaction().execute(async (trx) => {
    await updateUser(
      trx,
      user.id,
      { totpSecret: user.totpPendingSecret, totpEnabledAt: now, totpPendingSecret: null, totpLastStep: step },
      now,
    )
    await replaceRecoveryCodes(trx, user.id, codes.map(recoveryCodeHash))
    // Other sessions were signed in without it: they end; this one goes on (as a full session).
    await keepOnlyHubSession(trx, user.id, session.id)
    await recordAudit(
      trx,
      principal,
      [{ type: 'user.second_factor_enabled', organisationId: user.organisationId, changes: { method: 'totp' } }],
      now,
    )
  })
  return codes
}

/** Turns the second factor off (with a current code), unless the organisation requires it. */
export async function disableTotp(
  deps: Pick<SignInDeps, 'db' | 'clock'>,
  principal: Principal,
  user: User,
  input: { code?: string; recoveryCode?: string },
): Promise<void> {
  if (!user.totpEnabledAt) return
  if (await findTotpRequired(deps.db, user.organisationId)) {
    throw new AppError('SECOND_FACTOR_REQUIRED_BY_ORGANISATION', 'your organisation requires a second factor: it cannot be turned off')
  }
  const now = deps.clock()
  await checkSecondFactor(deps.db, user, input, now)
  await deps.db.transaction().execute(async (trx) => {
    await updateUser(trx, user.id, { totpSecret: null, totpEnabledAt: null, totpPendingSecret: null, totpLastStep: null }, now)
    await replaceRecoveryCodes(trx, user.id, [])
    await recordAudit(trx, principal, [{ type: 'user.second_factor_disabled', organisationId: user.organisationId }], now)
  })
}

/** Ten new recovery codes (the old ones stop working), with a current TOTP code. */
export async function regenerateRecoveryCodes(
  deps: Pick<SignInDeps, 'db' | 'clock'>,
  principal: Principal,
  user: User,
  code: string,
): Promise<string[]> {
  const now = deps.clock()
  if (!user.totpEnabledAt) throw invalidSecondFactor()
  await checkSecondFactor(deps.db, user, { code }, now)
  const codes = newRecoveryCodes()
  await deps.db.transaction().execute(async (trx) => {
    await replaceRecoveryCodes(trx, user.id, codes.map(recoveryCodeHash))
    await recordAudit(trx, principal, [{ type: 'user.recovery_codes_regenerated', organisationId: user.organisationId }], now)
  })
  return codes
}
