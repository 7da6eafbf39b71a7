// The people of the selected organisation: invite (the one-time link is shown once, and e-mailed when SMTP is set
// up), change a role, remove. A change of role or a removal signs the user out at once.
import { useState } from 'preact/hooks'
import { api, query, type HubUser, type Role } from '../api'
import { Empty, Field, FormError, formatDate, Page, ShownOnce, useLoad, useSubmit } from '../ui'
import type { PageProps } from './types'

const ROLES: Role[] = ['admin', 'developer', 'analyst']
const ROLE_TEXT: Record<Role, string> = {
  admin: 'admin — everything',
  developer: 'developer — webhooks, origins, IP allowlist, read keys',
  analyst: 'analyst — read impact and allocations',
}

// The column headers of this page's table, written once: each <th scope="col"> shows one and each data cell repeats it
// in data-label, which the narrow layout (hub/src/styles.css) shows before the value, the thead being hidden.
const COLUMN = {
  email: 'Email',
  status: 'Status',
  secondFactor: 'Second factor',
  added: 'Added',
  roleAndActions: 'Role and actions',
} as const

function UserRow({ user, self, onChanged }: { user: HubUser; self: boolean; onChanged: () => void }) {
  const [role, setRole] = useState<Role>(user.role)
  const change = useSubmit(() => api('PATCH', `/users/${user.id}`, { role }), onChanged)
  const remove = useSubmit(() => api('DELETE', `/users/${user.id}`), onChanged)
  return (
    <tr>
      <th scope="row" class="break">
        {user.email}
        {self && ' (you)'}
      </th>
      <td data-label={COLUMN.status}>{user.status === 'invited' ? 'Invited' : 'Active'}</td>
      <td data-label={COLUMN.secondFactor}>{user.secondFactor ? 'On' : 'Off'}</td>
      <td data-label={COLUMN.added}>{formatDate(user.createdAt)}</td>
      <td class="stacked" data-label={COLUMN.roleAndActions}>
        <div class="row-actions">
          <Field label={`Role of ${user.email}`} error={change.fieldError('/role')}>
            {(props) => (
              <select {...props} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <button type="button" class="secondary" onClick={() => change.submit()} disabled={change.busy || role === user.role}>
            Change role of {user.email}
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => confirm(`Remove ${user.email}? They are signed out at once.`) && remove.submit()}
            disabled={remove.busy}
          >
            Remove {user.email}
          </button>
        </div>
        <FormError error={change.error ?? remove.error} fields={['/role']} />
      </td>
    </tr>
  )
}

export function Users({ organisation, session }: PageProps) {
  const { data, error, reload } = useLoad(
    () => api<{ data: HubUser[] }>('GET', `/users${query({ organisationId: organisation.organisationId })}`),
    [organisation.organisationId],
  )
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('developer')
  const [link, setLink] = useState<{ url: string; emailed: boolean } | null>(null)
  const invite = useSubmit(
    () => api<{ setPasswordUrl: string; emailed: boolean }>('POST', '/users', { organisationId: organisation.organisationId, email, role }),
    (result) => {
      setLink({ url: result.setPasswordUrl, emailed: result.emailed })
      setEmail('')
      reload()
    },
  )
  return (
    <Page
      title="Users"
      intro={`People who sign in to the Hub for ${organisation.tradingName}. Each acts on this organisation and everything below it.`}
    >
      {link && (
        <>
          {link.emailed && <p role="status">The invitation was also sent by e-mail.</p>}
          <ShownOnce label="One-time link to set the password (valid 24 hours)" value={link.url} onDone={() => setLink(null)} />
        </>
      )}
      <form class="card" onSubmit={invite.submit} noValidate>
        <h2>Invite a user</h2>
        <FormError error={invite.error} fields={['/email', '/role']} />
        <div class="grid">
          <Field label="Email" error={invite.fieldError('/email')}>
            {(props) => <input {...props} type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} required />}
          </Field>
          <Field label="Role" error={invite.fieldError('/role')}>
            {(props) => (
              <select {...props} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {ROLE_TEXT[r]}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div class="actions">
          <button type="submit" disabled={invite.busy}>
            Invite
          </button>
        </div>
      </form>
      <FormError error={error} />
      {data && data.data.length === 0 && <Empty>No users in this organisation yet.</Empty>}
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Users</caption>
            <thead>
              <tr>
                <th scope="col">{COLUMN.email}</th>
                <th scope="col">{COLUMN.status}</th>
                <th scope="col">{COLUMN.secondFactor}</th>
                <th scope="col">{COLUMN.added}</th>
                <th scope="col">{COLUMN.roleAndActions}</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((user) => (
                <UserRow key={`${user.id}-${user.role}`} user={user} self={user.id === session.user.id} onChanged={reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  )
}
