// Signing in (e-mail and password, then the second factor when the user has one), setting a password from a
// one-time link, and enrolling a second factor when the organisation requires one.
import { useEffect, useState } from 'preact/hooks'
import { api } from '../api'
import { navigate } from '../router'
import { Field, FormError, Page, useSubmit } from '../ui'

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [step, setStep] = useState<'password' | 'second_factor'>('password')
  const [code, setCode] = useState('')
  const [useRecovery, setUseRecovery] = useState(false)
  const form = useSubmit(
    () =>
      step === 'password'
        ? api<{ next: string }>('POST', '/sign-in', { email, password })
        : api<{ next: string }>('POST', '/sign-in/second-factor', useRecovery ? { recoveryCode: code } : { code }),
    (result) => {
      if (result.next === 'second_factor') {
        setStep('second_factor')
        setPassword('')
      } else onSignedIn()
    },
  )
  if (step === 'second_factor') {
    return (
      <Page title="Enter your code" intro="Your account is protected with a second factor.">
        <form onSubmit={form.submit} noValidate>
          <FormError error={form.error} fields={['/code', '/recoveryCode']} />
          <Field
            label={useRecovery ? 'Recovery code' : 'Authentication code'}
            hint={useRecovery ? 'One of the recovery codes you saved (each works once).' : 'The 6-digit code from your authenticator app.'}
            error={form.fieldError(useRecovery ? '/recoveryCode' : '/code')}
          >
            {(props) => (
              <input
                {...props}
                name="code"
                autoComplete="one-time-code"
                inputMode={useRecovery ? 'text' : 'numeric'}
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
                required
              />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={form.busy}>
              Verify
            </button>
            <button type="button" class="link" onClick={() => setUseRecovery(!useRecovery)}>
              {useRecovery ? 'Use an authentication code instead' : 'Use a recovery code instead'}
            </button>
          </div>
        </form>
      </Page>
    )
  }
  return (
    <Page title="Sign in to the Canopy Hub">
      <form onSubmit={form.submit} noValidate>
        <FormError error={form.error} fields={['/email', '/password']} />
        <Field label="Email" error={form.fieldError('/email')}>
          {(props) => (
            <input
              {...props}
              type="email"
              name="email"
              autoComplete="username"
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
              required
            />
          )}
        </Field>
        <Field label="Password" error={form.fieldError('/password')}>
          {(props) => (
            <input
              {...props}
              type="password"
              name="password"
              autoComplete="current-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              required
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={form.busy}>
            Sign in
          </button>
        </div>
      </form>
    </Page>
  )
}

/** /hub/set-password#token=…: the token is read from the fragment (never sent to a server log) and used once. */
export function SetPassword() {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? ''
  const [email, setEmail] = useState<string | null>(null)
  const [linkError, setLinkError] = useState<string | null>(null)
  const [password, setPassword] = useState('')
  const [repeat, setRepeat] = useState('')
  const [done, setDone] = useState(false)
  useEffect(() => {
    api<{ email: string }>('POST', '/password-links/check', { token }).then(
      (result) => setEmail(result.email),
      (error: Error) => setLinkError(error.message),
    )
  }, [token])
  const form = useSubmit(
    async () => {
      if (password !== repeat) throw new Error('the two passwords are not the same')
      await api('POST', '/password-links/use', { token, password })
    },
    () => {
      history.replaceState(null, '', '/hub/set-password')
      setDone(true)
    },
  )
  if (done) {
    return (
      <Page title="Your password is set">
        <p>You can now sign in with your e-mail address and your new password.</p>
        <div class="actions">
          <button type="button" onClick={() => navigate('/hub/sign-in')}>
            Go to sign in
          </button>
        </div>
      </Page>
    )
  }
  if (linkError) {
    return (
      <Page title="Set your password">
        <p class="form-error" role="alert">
          {linkError}
        </p>
      </Page>
    )
  }
  return (
    <Page
      title="Set your password"
      intro="At least 12 characters; a long phrase of a few unrelated words is easy to remember and hard to guess."
    >
      <form onSubmit={form.submit} noValidate>
        <FormError error={form.error} fields={['/password']} />
        <Field label="Email">{(props) => <input {...props} type="email" autoComplete="username" value={email ?? ''} readOnly />}</Field>
        <Field label="New password" error={form.fieldError('/password')}>
          {(props) => (
            <input
              {...props}
              type="password"
              name="new-password"
              autoComplete="new-password"
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
              required
            />
          )}
        </Field>
        <Field label="Repeat the password">
          {(props) => (
            <input
              {...props}
              type="password"
              autoComplete="new-password"
              value={repeat}
              onInput={(e) => setRepeat(e.currentTarget.value)}
              required
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit" disabled={form.busy || email === null}>
            Set password
          </button>
        </div>
      </form>
    </Page>
  )
}
