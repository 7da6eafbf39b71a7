// Hub users → wire: never a password hash, a TOTP secret or a recovery code.
import type { User } from '../../db/repositories/users.js'
import type { HubUserResponse } from '../schemas/hub.js'

export const presentHubUser = (user: User): HubUserResponse => ({
  id: user.id,
  organisationId: user.organisationId,
  email: user.email,
  role: user.role,
  status: user.passwordHash ? 'active' : 'invited',
  secondFactor: user.totpEnabledAt !== null,
  createdAt: user.createdAt.toISOString(),
})
