// The Hub's calls to its API (/hub/api): same-origin, the session cookie sent by the browser, the CSRF token in a
// header on every request that changes something. Errors keep the API's shape, so a form can show each
// `details[].path` next to its field.

export interface ApiErrorBody {
  error: string
  code: string
  details?: { path: string; message: string }[]
  requestId?: string
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.error)
  }
  /** The message for a field, by the JSON pointer the API names (its first detail at or under that path). */
  forField(path: string): string | undefined {
    return this.body.details?.find((d) => d.path === path || d.path.startsWith(`${path}/`))?.message
  }
}

let csrfToken = ''
export const setCsrfToken = (token: string): void => {
  csrfToken = token
}

/** Told when the API answers 401: the session ended (idle, signed out elsewhere, role changed). */
let onSignedOut: () => void = () => {}
export const whenSignedOut = (handler: () => void): void => {
  onSignedOut = handler
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken
  const response = await fetch(`/hub/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  if (response.status === 204) return undefined as T
  const json = (await response.json().catch(() => ({ error: 'the server answered something unexpected', code: 'UNEXPECTED' }))) as unknown
  if (!response.ok) {
    const error = new ApiError(response.status, json as ApiErrorBody)
    if (response.status === 401 && !path.startsWith('/sign-in')) onSignedOut()
    throw error
  }
  return json as T
}

export const query = (params: Record<string, string | number | undefined>): string => {
  const entries = Object.entries(params).filter((entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== '')
  return entries.length ? `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}` : ''
}

// What the API answers (the subset the pages use).
export type Role = 'admin' | 'developer' | 'analyst'

export interface HubUser {
  id: string
  organisationId: string
  email: string
  role: Role
  status: 'invited' | 'active'
  secondFactor: boolean
  createdAt: string
}

export interface Session {
  user: HubUser
  stage: 'enrol_second_factor' | 'active'
  csrfToken: string
  permissions: string[]
  secondFactorRequired: boolean
  expiresAt: string
}

export interface Organisation {
  organisationId: string
  parentOrganisationId: string | null
  tradingName: string
  legalName: string
  currencyCode: string
  address: { countryCode: string }
  status: { value: 'active' | 'inactive' }
  allowedOrigins: string[] | null
  ipAllowlist: { enabled: boolean; entries: string[] } | null
  requireSecondFactor: boolean
  depth: number
}

export interface ApiKey {
  id: string
  organisationId: string
  mode: 'live' | 'test'
  prefix: string
  createdAt: string
  revokedAt: string | null
  expiresAt: string | null
  replacedByKeyId: string | null
  lastUsedAt: string | null
}

export interface WebhookEndpoint {
  id: string
  organisationId: string
  url: string
  description: string
  enabledEvents: string[]
  status: 'enabled' | 'disabled'
  disabledReason: string | null
  createdAt: string
}

export interface WebhookAttempt {
  id: string
  attemptedAt: string
  durationMs: number
  statusCode: number | null
  error: string | null
}

export interface WebhookDelivery {
  id: string
  eventId: string
  eventType: string
  status: 'pending' | 'succeeded' | 'failed'
  attempts: WebhookAttempt[]
  nextAttemptAt: string | null
  createdAt: string
}

export interface AuditEvent {
  id: string
  type: string
  organisationId: string
  actor: { type: 'user' | 'apiKey' | 'operator'; id: string | null; label: string }
  ip: string | null
  createdAt: string
  changes: Record<string, unknown>
}
