// Webhook signatures (docs/webhooks.md): Standard Webhooks v1 with every active secret, and ekko's
// compatibility header. node:crypto lives here, not in src/domain.
import { createHmac, randomBytes } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'

/** A new signing secret: whsec_ + base64 of 32 random bytes (the spec allows 24–64). */
export const generateSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64')

const secretKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret, space-separated. */
export function standardSignature(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  return secrets
    .map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`)
    .join(' ')
}

/** ekko's `signature`: lowercase hex HMAC-SHA256 of the body keyed with the organisationId (not a secret). */
export const ekkoSignature = (body: string, organisationId: string): string =>
  createHmac('sha256', organisationId).update(body).digest('hex')
