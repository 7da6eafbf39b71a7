// Wire schemas of the Hub's own routes (/hub/api): sign-in, the session, the second factor, users.
import { Type, type Static } from '@sinclair/typebox'
import { PERMISSIONS, ROLES } from '../../domain/permissions.js'
import { nullable, stringEnum, UuidSchema } from './common.js'

const Email = Type.String({
  minLength: 3,
  maxLength: 254,
  pattern: '^[^@\\s]+@[^@\\s]+$',
  errorMessage: { pattern: 'must be an e-mail address', minLength: 'must be an e-mail address' },
})
const Password = Type.String({ minLength: 1, maxLength: 1000 })
const Code = Type.String({ minLength: 1, maxLength: 20 })
const RoleSchema = stringEnum(ROLES, 'admin, developer or analyst')

export const SignInBodySchema = Type.Object({ email: Email, password: Password }, { additionalProperties: false })
export const SecondFactorBodySchema = Type.Object(
  { code: Type.Optional(Code), recoveryCode: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })) },
  { additionalProperties: false, minProperties: 1, maxProperties: 1 },
)
export const CodeBodySchema = Type.Object({ code: Code }, { additionalProperties: false })
export const PasswordLinkBodySchema = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 200 }) },
  { additionalProperties: false },
)
export const SetPasswordBodySchema = Type.Object(
  { token: Type.String({ minLength: 10, maxLength: 200 }), password: Password },
  { additionalProperties: false },
)

export const SignInResultSchema = Type.Object({
  next: stringEnum(['second_factor', 'enrol_second_factor', 'done'] as const, 'What the sign-in page does next'),
})

export const HubUserSchema = Type.Object({
  id: UuidSchema,
  organisationId: UuidSchema,
  email: Type.String(),
  role: RoleSchema,
  status: stringEnum(['invited', 'active'] as const, 'invited: no password set yet'),
  secondFactor: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
})
export type HubUserResponse = Static<typeof HubUserSchema>

export const HubSessionSchema = Type.Object({
  user: HubUserSchema,
  stage: stringEnum(['enrol_second_factor', 'active'] as const, 'enrol_second_factor: only enrolment is open'),
  csrfToken: Type.String({ description: 'Send it in x-csrf-token with every request that changes something' }),
  permissions: Type.Array(stringEnum(PERMISSIONS, 'A permission of the role')),
  secondFactorRequired: Type.Boolean(),
  expiresAt: Type.String({ format: 'date-time' }),
})

export const EnrolmentSchema = Type.Object({
  secret: Type.String({ description: 'Base32, to type into an authenticator app' }),
  otpauthUri: Type.String(),
  qrCode: Type.String({ description: 'The otpauth URI as a QR code (an SVG data: URL)' }),
})
export const RecoveryCodesSchema = Type.Object({ recoveryCodes: Type.Array(Type.String(), { description: 'Shown once' }) })

export const UserListQuerySchema = Type.Object({ organisationId: UuidSchema }, { additionalProperties: false })
export const UserListSchema = Type.Object({ data: Type.Array(HubUserSchema) })
export const InviteUserBodySchema = Type.Object(
  { organisationId: UuidSchema, email: Email, role: RoleSchema },
  { additionalProperties: false },
)
export const InvitedUserSchema = Type.Object({
  user: HubUserSchema,
  setPasswordUrl: Type.String({ description: 'The one-time link (24 h), shown once' }),
  emailed: Type.Boolean({ description: 'Also e-mailed (SMTP_URL is set)' }),
})
export const ChangeRoleBodySchema = Type.Object({ role: RoleSchema }, { additionalProperties: false })
export const PasswordLinkSchema = Type.Object({ email: Type.String() })
export const NullableString = nullable(Type.String())
