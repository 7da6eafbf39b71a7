// The console's pages, in the navigation's order. A page names the permission it needs (src/domain/permissions.ts):
// a role without it does not see it in the navigation and gets a refusal if it opens it (the server refuses the
// calls too).
import type { JSX } from 'preact'
import { Allocations } from './allocations'
import { Dashboard } from './dashboard'
import { AllowedOrigins, IpAllowlist } from './settings'
import { ApiKeys } from './api-keys'
import { AuditLog } from './audit-log'
import { Home } from './home'
import { Organisations } from './organisations'
import type { PageProps } from './types'
import { Users } from './users'
import { Webhooks } from './webhooks'

export interface HubPage {
  path: string
  title: string
  permission: string
  /** What the page is for, said when a role may not use it. */
  purpose: string
  component: (props: PageProps) => JSX.Element
}

export const PAGES: HubPage[] = [
  { path: '/hub', title: 'Overview', permission: 'organisations:read', purpose: 'the overview', component: Home },
  { path: '/hub/dashboard', title: 'Dashboard', permission: 'impact:read', purpose: 'the dashboard', component: Dashboard },
  { path: '/hub/allocations', title: 'Allocations', permission: 'impact:read', purpose: 'the allocations', component: Allocations },
  { path: '/hub/api-keys', title: 'API keys', permission: 'apiKeys:read', purpose: 'API keys', component: ApiKeys },
  { path: '/hub/webhooks', title: 'Webhooks', permission: 'webhooks:read', purpose: 'webhooks', component: Webhooks },
  {
    path: '/hub/allowed-origins',
    title: 'Allowed origins',
    permission: 'organisations:configure',
    purpose: 'allowed origins',
    component: AllowedOrigins,
  },
  {
    path: '/hub/ip-allowlist',
    title: 'IP allowlist',
    permission: 'organisations:configure',
    purpose: 'the IP allowlist',
    component: IpAllowlist,
  },
  {
    path: '/hub/organisations',
    title: 'Organisations',
    permission: 'organisations:manage',
    purpose: 'managing organisations',
    component: Organisations,
  },
  { path: '/hub/users', title: 'Users', permission: 'users:read', purpose: 'managing users', component: Users },
  { path: '/hub/audit-log', title: 'Audit log', permission: 'auditEvents:read', purpose: 'the audit log', component: AuditLog },
]
