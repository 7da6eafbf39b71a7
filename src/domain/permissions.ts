// Who may do what: the Hub's roles and the permissions each route declares. One table, read by the HTTP layer for
// every request (API keys and Hub users alike), by the Hub's pages to show what a role can use, and by the tests.

export const ROLES = ['admin', 'developer', 'analyst'] as const
export type Role = (typeof ROLES)[number]

/**
 * What a route needs. `impact:read` covers quotes, allocations, reconciliation records and their summaries;
 * `organisations:configure` the settings developers own (allowed origins, the IP allowlist);
 * `organisations:manage` child organisations, their deactivation and the organisation's security settings.
 */
export const PERMISSIONS = [
  'organisations:read',
  'organisations:configure',
  'organisations:manage',
  'apiKeys:read',
  'apiKeys:write',
  'webhooks:read',
  'webhooks:write',
  'users:read',
  'users:write',
  'auditEvents:read',
  'impact:read',
  'transactions:write',
] as const
export type Permission = (typeof PERMISSIONS)[number]

/**
 * The roles (issue 19): admin — everything a person can do in the Hub; developer — webhooks, allowed origins, the IP
 * allowlist and reading keys; analyst — reading impact and allocations. No role writes transactions (quotes,
 * sessions, allocations, reversals): those are a merchant backend's, made with an API key.
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  admin: [
    'organisations:read',
    'organisations:configure',
    'organisations:manage',
    'apiKeys:read',
    'apiKeys:write',
    'webhooks:read',
    'webhooks:write',
    'users:read',
    'users:write',
    'auditEvents:read',
    'impact:read',
  ],
  developer: ['organisations:read', 'organisations:configure', 'apiKeys:read', 'webhooks:read', 'webhooks:write', 'impact:read'],
  analyst: ['organisations:read', 'impact:read'],
}

/** Hub users are managed in the Hub only: an API key never creates, changes or removes the people who sign in. */
const HUB_ONLY: readonly Permission[] = ['users:read', 'users:write']

/** An API key keeps every right it had before roles existed: everything but managing Hub users. */
export const API_KEY_PERMISSIONS: readonly Permission[] = PERMISSIONS.filter((p) => !HUB_ONLY.includes(p))

export type Grantee = { kind: 'apiKey' } | { kind: 'user'; role: Role }

/**
 * Whether a caller may use a route. A route that declares no permission is open to API keys (as every route was
 * before roles) and closed to Hub users: a route nobody thought about is never reachable from the Hub by accident.
 */
export function isPermitted(grantee: Grantee, permission: Permission | undefined): boolean {
  if (grantee.kind === 'apiKey') return permission === undefined || API_KEY_PERMISSIONS.includes(permission)
  return permission !== undefined && ROLE_PERMISSIONS[grantee.role].includes(permission)
}

export const permissionsOf = (grantee: Grantee): Permission[] => PERMISSIONS.filter((permission) => isPermitted(grantee, permission))

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value)
