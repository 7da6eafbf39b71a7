// Secrets of Hub sign-in: Argon2id password hashes (@node-rs/argon2), the common-password list
// (@zxcvbn-ts/language-common), TOTP (RFC 6238, otpauth), recovery codes and random tokens. The first two are loaded
// with the first password handled, not at start: an API process that serves no sign-in never holds them.
import { createHash, randomBytes } from 'node:crypto'
import type * as Argon2 from '@node-rs/argon2'
import { Secret, TOTP } from 'otpauth'
import { renderSVG } from 'uqr'
import { passwordProblem } from '../../domain/sign-in.js'
import { AppError } from '../../errors.js'

// OWASP's Argon2id minimum: 19 MiB, 2 passes, 1 lane (about 25 ms here).
// algorithm 2 = Argon2id (the package's Algorithm is a const enum, which isolated modules cannot read).
const ARGON2 = { algorithm: 2 as const, memoryCost: 19_456, timeCost: 2, parallelism: 1 }

let argon2: Promise<typeof Argon2> | undefined
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'))

export const hashPassword = async (password: string): Promise<string> => (await loadArgon2()).hash(password, ARGON2)

let dummyHash: Promise<string> | undefined
/**
 * Checks a password against a stored hash; with no hash (an unknown e-mail, a user who never set a password) it
 * checks against a hash of nothing anyone knows, so that both take as long (no user enumeration by timing).
 */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  dummyHash ??= hashPassword(randomBytes(24).toString('base64'))
  const against = stored ?? (await dummyHash)
  const { verify } = await loadArgon2()
  const ok = await verify(against, password).catch(() => false)
  return ok && stored !== null
}

let common: Promise<ReadonlySet<string>> | undefined
const commonPasswords = () =>
  (common ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => new Set(dictionary['passwords-common'].map((p) => p.toLowerCase())),
  ))

/** WEAK_PASSWORD naming /password, unless the password meets the policy. */
export async function assertStrongPassword(password: string, email: string, path = '/password'): Promise<void> {
  const listed = await commonPasswords()
  const problem = passwordProblem(password, email, (candidate) => listed.has(candidate))
  if (problem) throw new AppError('WEAK_PASSWORD', `password ${problem}`, [{ path, message: problem }])
}

export const randomToken = (): string => randomBytes(32).toString('base64url')
export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest()

// ---------------------------------------------------------------------------------------------------------------
// TOTP: 6 digits, 30 s steps, SHA-1 (what authenticator apps support), one step of drift either way.

const PERIOD_SECONDS = 30
const totp = (secret: string, label = 'Canopy Hub') =>
  new TOTP({ issuer: 'Canopy Hub', label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(secret) })

export const newTotpSecret = (): string => new Secret({ size: 20 }).base32

export function totpEnrolment(secret: string, email: string): { secret: string; otpauthUri: string; qrCode: string } {
  const otpauthUri = totp(secret, email).toString()
  const svg = renderSVG(otpauthUri, { border: 2 })
  return { secret, otpauthUri, qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` }
}

/** The time step a code is valid for at `now` (±1 step), or undefined. */
export function totpStep(secret: string, code: string, now: Date): number | undefined {
  const token = code.replace(/\s+/g, '')
  if (!/^\d{6}$/.test(token)) return undefined
  const delta = totp(secret).validate({ token, timestamp: now.getTime(), window: 1 })
  return delta === null ? undefined : Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta
}

/** The code of a secret at a time (tests and the enrolment page's own check). */
export const totpCode = (secret: string, at: Date): string => totp(secret).generate({ timestamp: at.getTime() })

// Recovery codes: 10 of them, each 10 characters of an unambiguous alphabet (~50 bits), shown once, kept as SHA-256.
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'
export const RECOVERY_CODE_COUNT = 10

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = ''
    while (code.length < 10) {
      for (const byte of randomBytes(16))
        if (byte < 248 - (248 % RECOVERY_ALPHABET.length) && code.length < 10) code += RECOVERY_ALPHABET[byte % RECOVERY_ALPHABET.length]
    }
    return `${code.slice(0, 5)}-${code.slice(5)}`
  })
}

export const recoveryCodeHash = (code: string): Buffer => sha256(code.toLowerCase().replace(/[^a-z0-9]/g, ''))
