import type { Organisation, Session } from '../api'

export interface PageProps {
  session: Session
  /** The organisation chosen in the switcher. */
  organisation: Organisation
  /** The user's organisation and every organisation below it. */
  organisations: Organisation[]
  reloadOrganisations: () => void
  can: (permission: string) => boolean
}
