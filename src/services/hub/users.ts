// Hub users: created by an operator (CLI) or invited by an admin, each with a one-time set-password link (24 h);
// roles changed and users removed by admins of their organisation's tree. A role change or a removal ends the
// user's sessions at once (they are rows, read on every request). Every change is in the audit log.
import type { Kysely } from 'kysely'
import type { Clock } from '../../clock.js'
import type { Database } from '../../db/database.js'
import { findOrganisationById } from '../../db/repositories/organisations.js'
import {
  countAdmins,
  deleteHubSessionsOfUser,
  deleteUser,
  findPasswordTokenUser,
  findUserById,
  findUsersOfOrganisation,
  insertHubEmail,
  insertPasswordToken,
  insertUser,
  updateUser,
  usePasswordToken,
  type User,
} from '../../db/repositories/users.js'
import type { Role } from '../../domain/permissions.js'
import { AppError, notFound } from '../../errors.js'
import { newId } from '../../ids.js'
import { OPERATOR_ACTOR, type AccessResolver, type Principal } from '../access.js'
import { recordAudit } from '../audit.js'
import { inTransaction } from '../transaction.js'
import { assertStrongPassword, hashPassword, randomToken, sha256 } from './credentials.js'

export type { User }

export const PASSWORD_LINK_TTL_MS = 24 * 60 * 60_000

export interface UserDeps {
  readonly db: Kysely<Database>
  readonly access: AccessResolver
  readonly clock: Clock
  /** The API's public base URL (PUBLIC_BASE_URL): set-password links start with it. */
  readonly publicBaseUrl: string
  /** Whether invitations are e-mailed (SMTP_URL is set): they go through the hub_emails outbox. */
  readonly emailInvitations: boolean
}

export const normaliseEmail = (email: string): string => email.trim().toLowerCase()

/** A set-password link: the token travels in the fragment, so it reaches neither server logs nor Referer headers. */
const setPasswordUrl = (baseUrl: string, token: string): string => `${baseUrl}/hub/set-password#token=${token}`

export interface CreatedUser {
  user: User
  /** The one-time link, shown once. */
  setPasswordUrl: string
  emailed: boolean
}

async function createUser(
  db: Kysely<Database>,
  by: Pick<Principal, 'actor' | 'ip'>,
  input: { organisationId: string; email: string; role: Role },
  options: { now: Date; publicBaseUrl: string; email: boolean; invitedBy?: string },
): Promise<CreatedUser> {
  const email = normaliseEmail(input.email)
  const token = randomToken()
  return inTransaction(db, async (trx) => {
    const user = await insertUser(trx, {
      id: newId(),
      organisationId: input.organisationId,
      email,
      role: input.role,
      createdAt: options.now,
    })
    if (!user)
      throw new AppError('EMAIL_IN_USE', 'a hub user with this e-mail address already exists', [
        { path: '/email', message: 'is already in use' },
      ])
    await insertPasswordToken(trx, {
      id: newId(),
      userId: user.id,
      tokenHash: sha256(token),
      createdAt: options.now,
      expiresAt: new Date(options.now.getTime() + PASSWORD_LINK_TTL_MS),
    })
    const url = setPasswordUrl(options.publicBaseUrl, token)
    if (options.email) {
      await insertHubEmail(trx, {
        id: newId(),
        to: email,
        subject: 'You are invited to the Canopy Hub',
        body: [
          `${options.invitedBy ?? 'An administrator'} invited you to the Canopy Hub as ${input.role}.`,
          '',
          'Set your password within 24 hours with this one-time link:',
          url,
          '',
          'If you did not expect this invitation, ignore this e-mail.',
        ].join('\n'),
        now: options.now,
      })
    }
    await recordAudit(
      trx,
      by,
      [{ type: 'user.invited', organisationId: user.organisationId, changes: { userId: user.id, email, role: user.role } }],
      options.now,
    )
    return { user, setPasswordUrl: url, emailed: options.email }
  })
}

/** Operator path (CLI): the first admin of an organisation (or any user), with a one-time set-password link. */
export async function createUserAsOperator(
  db: Kysely<Database>,
  input: { organisationId: string; email: string; role: Role },
  options: { now: Date; publicBaseUrl: string },
): Promise<CreatedUser> {
  if (!(await findOrganisationById(db, input.organisationId))) throw notFound('organisation')
  return createUser(db, { actor: OPERATOR_ACTOR, ip: null }, input, { ...options, email: false })
}

/** An admin invites a user to an organisation of their tree; e-mailed when SMTP is configured. */
export async function inviteUser(
  deps: UserDeps,
  principal: Principal,
  input: { organisationId: string; email: string; role: Role },
): Promise<CreatedUser> {
  await deps.access.assertCanActOn(principal, input.organisationId)
  return createUser(deps.db, principal, input, {
    now: deps.clock(),
    publicBaseUrl: deps.publicBaseUrl,
    email: deps.emailInvitations,
    invitedBy: principal.actor.label,
  })
}

export async function listUsers(deps: Pick<UserDeps, 'db' | 'access'>, principal: Principal, organisationId: string): Promise<User[]> {
  await deps.access.assertCanActOn(principal, organisationId, '/organisationId')
  return findUsersOfOrganisation(deps.db, organisationId)
}

async function userOfTree(deps: Pick<UserDeps, 'db' | 'access'>, principal: Principal, id: string): Promise<User> {
  const user = await findUserById(deps.db, id)
  if (!user || !(await deps.access.canSee(principal, user.organisationId))) throw notFound('user')
  return user
}

const lastAdmin = () =>
  new AppError('LAST_ADMIN', 'an organisation keeps at least one admin: make another user admin first', [
    { path: '/role', message: "is the organisation's last admin" },
  ])

/** Changes a user's role; their sessions end at once (they sign in again with the new role). */
export async function changeUserRole(deps: UserDeps, principal: Principal, id: string, role: Role): Promise<User> {
  const user = await userOfTree(deps, principal, id)
  if (user.role === role) return user
  const now = deps.clock()
  return deps.db.transaction().execute(async (trx) => {
    if (user.role === 'admin' && (await countAdmins(trx, user.organisationId)) <= 1) throw lastAdmin()
    const changed = await updateUser(trx, id, { role }, now)
    if (!changed) throw notFound('user')
    await deleteHubSessionsOfUser(trx, id)
    await recordAudit(
      trx,
      principal,
      [
        {
          type: 'user.role_changed',
          organisationId: user.organisationId,
          changes: { userId: id, email: user.email, role: { from: user.role, to: role } },
        },
      ],
      now,
    )
    return changed
  })
}

/** Removes a user (and their sessions, at once). */
export async function removeUser(deps: UserDeps, principal: Principal, id: string): Promise<void> {
  const user = await userOfTree(deps, principal, id)
  const now = deps.clock()
  await deps.db.transaction().execute(async (trx) => {
    if (user.role === 'admin' && (await countAdmins(trx, user.organisationId)) <= 1) throw lastAdmin()
    await deleteUser(trx, id)
    await recordAudit(
      trx,
      principal,
      [{ type: 'user.removed', organisationId: user.organisationId, changes: { userId: id, email: user.email, role: user.role } }],
      now,
    )
  })
}

const invalidLink = () =>
  new AppError('INVALID_PASSWORD_LINK', 'this set-password link is unknown, already used or expired: ask an admin for a new one', [
    { path: '/token', message: 'is not a valid set-password link' },
  ])

/** The e-mail address a set-password link is for (so the page can show it), while the link is valid. */
export async function passwordLinkEmail(deps: Pick<UserDeps, 'db' | 'clock'>, token: string): Promise<string> {
  const user = await findPasswordTokenUser(deps.db, sha256(token), deps.clock())
  if (!user) throw invalidLink()
  return user.email
}

/** Sets a password with a one-time link: the link is used up, and any session of the user ends. */
export async function setPasswordWithLink(
  deps: Pick<UserDeps, 'db' | 'clock'>,
  input: { token: string; password: string; ip: string },
): Promise<User> {
  const now = deps.clock()
  const tokenHash = sha256(input.token)
  const user = await findPasswordTokenUser(deps.db, tokenHash, now)
  if (!user) throw invalidLink()
  await assertStrongPassword(input.password, user.email)
  const passwordHash = await hashPassword(input.password)
  return deps.db.transaction().execute(async (trx) => {
    if ((await usePasswordToken(trx, tokenHash, now)) !== user.id) throw invalidLink()
    const updated = await updateUser(trx, user.id, { passwordHash, passwordSetAt: now }, now)
    if (!updated) throw invalidLink()
    await deleteHubSessionsOfUser(trx, user.id)
    const actor = { type: 'user' as const, id: user.id, label: user.email, role: user.role, sessionId: '' }
    await recordAudit(
      trx,
      { actor, ip: input.ip },
      [{ type: 'user.password_set', organisationId: user.organisationId, changes: { userId: user.id } }],
      now,
    )
    return updated
  })
}
