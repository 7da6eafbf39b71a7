// The overview: the organisation in view and what the user's role lets them do here.
import { PAGES } from '.'
import { onLink } from '../router'
import { Page } from '../ui'
import type { PageProps } from './types'

export function Home({ session, organisation, can }: PageProps) {
  const pages = PAGES.filter((p) => p.path !== '/hub' && can(p.permission))
  return (
    <Page title={organisation.tradingName}>
      <dl class="facts">
        <dt>Legal name</dt>
        <dd class="break">{organisation.legalName}</dd>
        <dt>Country and currency</dt>
        <dd>
          {organisation.address.countryCode}, {organisation.currencyCode}
        </dd>
        <dt>Your role</dt>
        <dd>{session.user.role}</dd>
      </dl>
      {pages.length > 0 ? (
        <>
          <h2>What you can do here</h2>
          <ul class="links">
            {pages.map((p) => (
              <li key={p.path}>
                <a href={p.path} onClick={onLink}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <p>Your role has no pages here beyond your account.</p>
      )}
    </Page>
  )
}
