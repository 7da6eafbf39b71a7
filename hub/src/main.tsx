// The Canopy Hub in the browser: the session, the organisation switcher over the user's tree, the navigation of the
// pages the role may use, and the pages themselves.
import { render, type ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import 'uplot/dist/uPlot.min.css'
import './styles.css'
import { api, setCsrfToken, whenSignedOut, type Organisation, type Session } from './api'
import { Account, Enrol } from './pages/account'
import { PAGES } from './pages'
import { SetPassword, SignIn } from './pages/sign-in'
import { navigate, onLink, usePath } from './router'
import { NotAllowed, OrganisationOptions, Page } from './ui'

const STORAGE_KEY = 'canopy-hub-organisation'

function App() {
  const path = usePath()
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [organisations, setOrganisations] = useState<Organisation[]>([])
  const [selected, setSelected] = useState<string | null>(() => sessionStorage.getItem(STORAGE_KEY))

  const loadSession = useCallback(async () => {
    try {
      const current = await api<Session>('GET', '/session')
      setCsrfToken(current.csrfToken)
      setSession(current)
    } catch {
      setSession(null)
    }
  }, [])
  const loadOrganisations = useCallback(async () => {
    const { data } = await api<{ data: Organisation[] }>('GET', '/organisations')
    setOrganisations(data)
  }, [])

  useEffect(() => {
    whenSignedOut(() => setSession(null))
    void loadSession()
  }, [loadSession])
  useEffect(() => {
    if (session?.stage === 'active') void loadOrganisations().catch(() => undefined)
  }, [session, loadOrganisations])
  // Focus the page's heading when the page changes, so that screen readers announce it.
  useEffect(() => {
    document.getElementById('page-title')?.focus()
  }, [path])

  if (path.startsWith('/hub/set-password')) return <Shell>{<SetPassword />}</Shell>
  if (session === undefined) return <p class="loading">Loading…</p>
  if (session === null) {
    return (
      <Shell>
        <SignIn
          onSignedIn={() => {
            void loadSession()
            if (path === '/hub/sign-in') navigate('/hub')
          }}
        />
      </Shell>
    )
  }
  const signOut = async () => {
    await api('POST', '/sign-out').catch(() => undefined)
    setSession(null)
    navigate('/hub/sign-in')
  }
  if (session.stage === 'enrol_second_factor') {
    return (
      <Shell onSignOut={signOut}>
        <Page title="Set up your second factor">
          <Enrol session={session} onEnrolled={() => void loadSession()} />
        </Page>
      </Shell>
    )
  }
  const organisation = organisations.find((o) => o.organisationId === selected) ?? organisations[0]
  const can = (permission: string) => session.permissions.includes(permission)
  const page = PAGES.find((p) => p.path === (path === '/hub/' || path === '/hub/sign-in' ? '/hub' : path))
  const visible = PAGES.filter((p) => can(p.permission))
  let content
  if (path === '/hub/account') {
    content = <Account session={session} onChanged={() => void loadSession()} onSignedOut={() => setSession(null)} />
  } else if (!page) {
    content = (
      <Page title="Page not found">
        <p>There is no such page in the Hub.</p>
      </Page>
    )
  } else if (!can(page.permission)) {
    content = <NotAllowed role={session.user.role} what={page.purpose} />
  } else if (!organisation) {
    content = <p class="loading">Loading…</p>
  } else {
    const Component = page.component
    content = (
      <Component
        key={organisation.organisationId}
        session={session}
        organisation={organisation}
        organisations={organisations}
        reloadOrganisations={() => void loadOrganisations()}
        can={can}
      />
    )
  }
  return (
    <Shell onSignOut={signOut} email={session.user.email}>
      <div class="console">
        <nav class="sidebar" aria-label="Hub">
          {organisations.length > 0 && (
            <div class="field switcher">
              <label for="organisation-switcher">Organisation</label>
              <select
                id="organisation-switcher"
                value={organisation?.organisationId}
                onChange={(e) => {
                  sessionStorage.setItem(STORAGE_KEY, e.currentTarget.value)
                  setSelected(e.currentTarget.value)
                }}
              >
                <OrganisationOptions organisations={organisations} />
              </select>
            </div>
          )}
          <ul>
            {[...visible, { path: '/hub/account', title: 'Your account' }].map((p) => (
              <li key={p.path}>
                <a href={p.path} onClick={onLink} aria-current={p.path === (page?.path ?? path) ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main">{content}</main>
      </div>
    </Shell>
  )
}

function Shell({ children, onSignOut, email }: { children: ComponentChildren; onSignOut?: () => void; email?: string }) {
  return (
    <>
      <header class="topbar">
        <a class="brand" href="/hub" onClick={onLink}>
          Canopy Hub
        </a>
        {onSignOut && (
          <div class="who">
            {email && <span class="break">{email}</span>}
            <button type="button" class="secondary" onClick={onSignOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      {onSignOut ? (
        children
      ) : (
        <main id="main" class="narrow">
          {children}
        </main>
      )}
    </>
  )
}

const root = document.getElementById('app')
if (root) {
  root.textContent = ''
  render(<App />, root)
}
