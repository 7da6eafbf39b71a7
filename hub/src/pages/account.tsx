// Your account: the second factor (enrol with an authenticator app, recovery codes shown once, turn off), and
// signing out of every browser.
import { useState } from 'preact/hooks'
import { api, type Session } from '../api'
import { Field, FormError, Page, useSubmit } from '../ui'

interface Enrolment {
  secret: string
  otpauthUri: string
  qrCode: string
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <section class="shown-once" role="status" aria-labelledby="recovery-title">
      <h2 id="recovery-title">Your recovery codes</h2>
      <p>Each code signs you in once if you lose your authenticator. Save them somewhere safe now: they are shown once.</p>
      <ul class="codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </section>
  )
}

export function Enrol({ session, onEnrolled }: { session: Session; onEnrolled: () => void }) {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null)
  const [code, setCode] = useState('')
  const [codes, setCodes] = useState<string[] | null>(null)
  const start = useSubmit(() => api<Enrolment>('POST', '/me/second-factor/enrolment'), setEnrolment)
  const confirm = useSubmit(
    () => api<{ recoveryCodes: string[] }>('POST', '/me/second-factor/enrolment/confirm', { code }),
    (r) => setCodes(r.recoveryCodes),
  )
  if (codes) return <RecoveryCodes codes={codes} onDone={onEnrolled} />
  if (!enrolment) {
    return (
      <div>
        {session.secondFactorRequired && !session.user.secondFactor && (
          <p class="notice" role="status">
            Your organisation requires a second factor. Set it up to continue.
          </p>
        )}
        <FormError error={start.error} />
        <button type="button" onClick={() => start.submit()} disabled={start.busy}>
          Set up an authenticator app
        </button>
      </div>
    )
  }
  return (
    <form onSubmit={confirm.submit} noValidate>
      <ol class="steps">
        <li>
          Scan this code with an authenticator app.
          <img class="qr" src={enrolment.qrCode} alt="QR code of your authenticator key" width={180} height={180} />
        </li>
        <li>
          Or type this key into it: <code class="secret-key">{enrolment.secret}</code>
        </li>
        <li>Enter the 6-digit code it shows.</li>
      </ol>
      <FormError error={confirm.error} fields={['/code']} />
      <Field label="Authentication code" error={confirm.fieldError('/code')}>
        {(props) => (
          <input
            {...props}
            inputMode="numeric"
            autoComplete="one-time-code"
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
            required
          />
        )}
      </Field>
      <div class="actions">
        <button type="submit" disabled={confirm.busy}>
          Turn on
        </button>
      </div>
    </form>
  )
}

export function Account({ session, onChanged, onSignedOut }: { session: Session; onChanged: () => void; onSignedOut: () => void }) {
  const [code, setCode] = useState('')
  const [codes, setCodes] = useState<string[] | null>(null)
  const disable = useSubmit(() => api('POST', '/me/second-factor/disable', { code }), onChanged)
  const regenerate = useSubmit(
    () => api<{ recoveryCodes: string[] }>('POST', '/me/recovery-codes', { code }),
    (r) => setCodes(r.recoveryCodes),
  )
  const everywhere = useSubmit(() => api('POST', '/sign-out-everywhere'), onSignedOut)
  return (
    <Page title="Your account">
      <dl class="facts">
        <dt>Email</dt>
        <dd>{session.user.email}</dd>
        <dt>Role</dt>
        <dd>{session.user.role}</dd>
      </dl>
      <h2>Second factor</h2>
      {codes ? (
        <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />
      ) : session.user.secondFactor ? (
        <form onSubmit={(e) => e.preventDefault()} noValidate>
          <p>You sign in with an authenticator app.</p>
          <FormError error={disable.error ?? regenerate.error} fields={['/code']} />
          <Field
            label="Current authentication code"
            hint="Needed to turn it off or to get new recovery codes."
            error={disable.fieldError('/code') ?? regenerate.fieldError('/code')}
          >
            {(props) => (
              <input
                {...props}
                inputMode="numeric"
                autoComplete="one-time-code"
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            )}
          </Field>
          <div class="actions">
            <button type="button" onClick={() => regenerate.submit()} disabled={regenerate.busy}>
              New recovery codes
            </button>
            {!session.secondFactorRequired && (
              <button type="button" class="danger" onClick={() => disable.submit()} disabled={disable.busy}>
                Turn off
              </button>
            )}
          </div>
        </form>
      ) : (
        <Enrol session={session} onEnrolled={onChanged} />
      )}
      <h2>Sessions</h2>
      <p>Signs you out here and in every other browser.</p>
      <FormError error={everywhere.error} />
      <button type="button" class="secondary" onClick={() => everywhere.submit()} disabled={everywhere.busy}>
        Sign out everywhere
      </button>
    </Page>
  )
}
