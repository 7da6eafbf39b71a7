// The roles matrix of issue 19, as a table: each role against each permission, and API keys keeping their rights.
import { describe, expect, it } from 'vitest'
import {
  API_KEY_PERMISSIONS,
  isPermitted,
  PERMISSIONS,
  permissionsOf,
  ROLES,
  type Permission,
  type Role,
} from '../../../src/domain/permissions.js'

const MATRIX: Record<Permission, Record<Role, boolean>> = {
  'organisations:read': { admin: true, developer: true, analyst: true },
  'organisations:configure': { admin: true, developer: true, analyst: false },
  'organisations:manage': { admin: true, developer: false, analyst: false },
  'apiKeys:read': { admin: true, developer: true, analyst: false },
  'apiKeys:write': { admin: true, developer: false, analyst: false },
  'webhooks:read': { admin: true, developer: true, analyst: false },
  'webhooks:write': { admin: true, developer: true, analyst: false },
  'users:read': { admin: true, developer: false, analyst: false },
  'users:write': { admin: true, developer: false, analyst: false },
  'auditEvents:read': { admin: true, developer: false, analyst: false },
  'impact:read': { admin: true, developer: true, analyst: true },
  'transactions:write': { admin: false, developer: false, analyst: false },
}

describe('the roles matrix', () => {
  it('covers every permission', () => {
    expect(Object.keys(MATRIX).sort()).toEqual([...PERMISSIONS].sort())
  })

  it.each(PERMISSIONS.flatMap((permission) => ROLES.map((role) => [role, permission] as const)))('%s → %s', (role, permission) => {
    expect(isPermitted({ kind: 'user', role }, permission)).toBe(MATRIX[permission][role])
  })

  it('gives API keys every permission but managing Hub users, and every undeclared route', () => {
    expect(API_KEY_PERMISSIONS).toEqual(PERMISSIONS.filter((p) => p !== 'users:read' && p !== 'users:write'))
    for (const permission of PERMISSIONS) {
      expect(isPermitted({ kind: 'apiKey' }, permission)).toBe(!permission.startsWith('users:'))
    }
    expect(isPermitted({ kind: 'apiKey' }, undefined)).toBe(true)
  })

  it('never opens a route that declares no permission to a Hub user', () => {
    for (const role of ROLES) expect(isPermitted({ kind: 'user', role }, undefined)).toBe(false)
  })

  it('lists what a role can do', () => {
    expect(permissionsOf({ kind: 'user', role: 'analyst' })).toEqual(['organisations:read', 'impact:read'])
  })
})
