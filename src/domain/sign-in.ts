// Hub sign-in rules that need no I/O: the password policy and how long repeated failures make a caller wait.

export const MIN_PASSWORD_LENGTH = 12
export const MAX_PASSWORD_LENGTH = 200

/** Why a password is refused, or undefined. Length counts characters (code points), not bytes. */
export function passwordProblem(password: string, email: string, isCommon: (candidate: string) => boolean): string | undefined {
  const length = [...password].length
  if (length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`
  if (length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`
  const lower = password.toLowerCase()
  if (isCommon(lower) || isCommon(lower.replace(/[\d\W_]+$/u, ''))) return 'is a commonly used password; choose another'
  const local = email.toLowerCase().split('@')[0] ?? ''
  if (lower.includes(email.toLowerCase()) || (local.length >= 4 && lower.includes(local))) return 'must not contain your e-mail address'
  if (new Set(password).size < 4) return 'must use more than a few different characters'
  return undefined
}

export interface ThrottlePolicy {
  /** Failures allowed without any wait. */
  freeFailures: number
  /** The first wait, doubled with each further failure, up to maxDelayMs. */
  baseDelayMs: number
  maxDelayMs: number
}

/** Per account: 5 free failures, then 1 s, 2 s, 4 s … at most 15 minutes between attempts; never a lock for good. */
export const ACCOUNT_THROTTLE: ThrottlePolicy = { freeFailures: 5, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000 }
/** Per client address: more room (an office behind one address), the same ladder. */
export const ADDRESS_THROTTLE: ThrottlePolicy = { freeFailures: 20, baseDelayMs: 1_000, maxDelayMs: 15 * 60_000 }
/** A counter is forgotten this long after its last failure. */
export const THROTTLE_WINDOW_MS = 60 * 60_000

/** How long after the last failure the next attempt must wait. */
export function throttleDelayMs(failures: number, policy: ThrottlePolicy): number {
  if (failures < policy.freeFailures) return 0
  const exponent = Math.min(failures - policy.freeFailures, 30)
  return Math.min(policy.baseDelayMs * 2 ** exponent, policy.maxDelayMs)
}
