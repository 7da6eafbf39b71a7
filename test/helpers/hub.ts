// Hub users and signed-in sessions for HTTP tests: a user with a password (through the real set-password link), and
// a small client that keeps the session cookie and sends the Origin and CSRF token as the Hub's pages do.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import type { Role } from '../../src/domain/permissions.js'
import { createUserAsOperator, setPasswordWithLink } from '../../src/services/hub/users.js'

export const HUB_ORIGIN = 'http://127.0.0.1:3000'
export const PASSWORD = 'correct horse battery staple 42'

let counter = 0
export async function createHubUser(
  db: Kysely<Database>,
  organisationId: string,
  role: Role,
  options: { now?: Date; password?: string | null; email?: string } = {},
): Promise<{ id: string; email: string; password: string; setPasswordUrl: string }> {
  const now = options.now ?? new Date('2026-11-21T09:30:00.000Z')
  const email = options.email ?? `${role}-${Date.now().toString(36)}-${counter++}@example.com`
  const created = await createUserAsOperator(db, { organisationId, email, role }, { now, publicBaseUrl: HUB_ORIGIN })
  const password = options.password === undefined ? PASSWORD : options.password
  if (password !== null) {
    const token = new URL(created.setPasswordUrl).hash.replace('#token=', '')
    await setPasswordWithLink({ db, clock: () => now }, { token, password, ip: '127.0.0.1' })
  }
  return { id: created.user.id, email, password: password ?? '', setPasswordUrl: created.setPasswordUrl }
}

export const cookieOf = (response: LightMyRequestResponse): string | undefined => {
  const header = response.headers['set-cookie']
  const first = Array.isArray(header) ? header[0] : header
  return first?.split(';')[0]
}

export interface HubClient {
  cookie: string | undefined
  csrf: string | undefined
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>
  get(url: string): Promise<LightMyRequestResponse>
}

/** A browser tab: keeps the cookie, sends Origin (and, once signed in, the CSRF token). */
export function hubClient(app: FastifyInstance, options: { origin?: string; remoteAddress?: string } = {}): HubClient {
  const tab: HubClient = {
    cookie: undefined,
    csrf: undefined,
    async request(method, url, body, headers = {}) {
      const response = await app.inject({
        method: method as 'GET',
        url,
        remoteAddress: options.remoteAddress ?? '127.0.0.1',
        headers: {
          origin: options.origin ?? HUB_ORIGIN,
          host: new URL(HUB_ORIGIN).host,
          ...(tab.cookie ? { cookie: tab.cookie } : {}),
          ...(tab.csrf ? { 'x-csrf-token': tab.csrf } : {}),
          ...headers,
        },
        ...(body === undefined ? {} : { payload: body as object }),
      })
      const set = cookieOf(response)
      if (set !== undefined) tab.cookie = set.endsWith('=') ? undefined : set
      return response
    },
    get: (url) => tab.request('GET', url),
  }
  return tab
}

/** Signs a user in (password only) and reads the session's CSRF token. */
export async function signedIn(
  app: FastifyInstance,
  user: { email: string; password: string },
  options: { remoteAddress?: string } = {},
): Promise<HubClient> {
  const tab = hubClient(app, options)
  const res = await tab.request('POST', '/hub/api/sign-in', { email: user.email, password: user.password })
  if (res.statusCode !== 200) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`)
  if (res.json().next === 'done') tab.csrf = (await tab.get('/hub/api/session')).json().csrfToken
  return tab
}
