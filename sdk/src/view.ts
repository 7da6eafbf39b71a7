// Builds a widget's DOM from a session read: text and DOM APIs only (h() in dom.ts), never markup.
import { h, type Child } from './dom.js'
import { formatArea, formatCo2e, formatList, formatMoney, formatPercent } from './format.js'
import { fill, format, type Strings } from './i18n.js'
import type { ContributionChoice } from './options.js'
import type { ImpactPartner, SdkSession } from './session.js'

export type ElementType = 'embedded' | 'takeover' | 'checkout'

export interface ViewModel {
  type: ElementType
  session: SdkSession
  strings: Strings
  /** The locale of `strings` (a bundled one). */
  stringsLocale: string
  /** Intl locale: the session's. */
  locale: string
  apiBase: string
  /** The offset price in minor units, or null when the offset is not offered. */
  credits: number | null
  choices: readonly ContributionChoice[]
}

export interface Selection {
  credits: boolean
  /** Index into choices, or -1. */
  choice: number
}

export interface ViewActions {
  toggleCredits(): void
  pick(index: number): void
  confirm(): void
  dismiss(): void
}

export interface View {
  /** What goes into the shadow root: the widget, or for a takeover the <dialog> around it. */
  node: HTMLElement
  dialog?: HTMLDialogElement
  title: HTMLElement
  /** Reflects a selection (aria-checked / aria-pressed) and says `message` in the live region. */
  sync(selection: Selection, message: string): void
}

const money = (model: ViewModel, minor: number) => formatMoney(minor, model.session.currencyCode, model.locale)

/** Image URLs come from the API: a path is resolved against apiBase; only http(s) and data:image are used. */
export function imageUrl(path: string, apiBase: string): string | undefined {
  try {
    const url = new URL(path.startsWith('/') && !path.startsWith('//') ? `${apiBase}${path}` : path)
    return /^https?:$/.test(url.protocol) || /^data:image\//.test(url.href) ? url.href : undefined
  } catch {
    return undefined
  }
}

function partnerItem(partner: ImpactPartner, model: ViewModel): HTMLElement {
  const logo = partner.images.logos?.[0]
  const src = logo && imageUrl(logo.path, model.apiBase)
  let img: HTMLImageElement | null = null
  if (logo && src) {
    img = h('img', {
      part: 'partner-logo',
      src,
      alt: format(model.strings.logoAlt, { name: partner.name }),
      width: String(logo.width),
      height: String(logo.height),
      loading: 'lazy',
      decoding: 'async',
      referrerpolicy: 'no-referrer',
    })
    // A logo that does not load is dropped rather than shown broken.
    img.addEventListener('error', () => img?.remove(), { once: true })
  }
  return h(
    'li',
    { part: 'partner', class: 'partner' },
    img,
    h('span', null, h('strong', null, partner.name), partner.shortDescription ? h('br') : null, partner.shortDescription),
  )
}

export function buildView(model: ViewModel, actions: ViewActions): View {
  const { session, strings, locale } = model
  const carbon = session.impactType === 'carbon' ? session : null
  const names = (partners: readonly ImpactPartner[]) =>
    formatList(
      partners.map((p) => p.name),
      locale,
    )

  const title = h(
    'h2',
    { id: 'canopy-title', part: 'title', tabindex: model.type === 'takeover' ? '-1' : undefined },
    carbon ? strings.titleCarbon : strings.titleNature,
  )
  const close =
    model.type === 'takeover' ? h('button', { type: 'button', class: 'close', part: 'close', 'aria-label': strings.close }, '×') : null
  close?.addEventListener('click', actions.dismiss)

  const figure =
    session.impactType === 'carbon'
      ? fill(strings.footprintCarbon, {
          amount: h('strong', null, formatCo2e(session.footprint.co2eGrams, session.footprint.co2eOunces, locale, strings)),
        })
      : fill(strings.footprintNature, {
          area: h('strong', null, formatArea(session.footprint.areaSquareMetres, session.footprint.areaSquareFeet, locale, strings)),
        })
  const equivalents = session.footprint.equivalents.length
    ? h(
        'ul',
        // The API writes the equivalents in the session's locale, which may not be one the SDK has strings for.
        { part: 'equivalents', lang: session.locale === model.stringsLocale ? undefined : session.locale },
        ...session.footprint.equivalents.map((e) => h('li', null, e.description)),
      )
    : null

  // The offset: a switch, off until the consumer turns it on.
  let offsetSwitch: HTMLButtonElement | null = null
  let offset: HTMLElement | null = null
  if (carbon && model.credits !== null) {
    const hint = carbon.credits.impactPartners.length
      ? h('p', { id: 'canopy-offset-hint', class: 'small' }, format(strings.offsetHint, { partners: names(carbon.credits.impactPartners) }))
      : null
    offsetSwitch = h(
      'button',
      {
        type: 'button',
        role: 'switch',
        'aria-checked': 'false',
        class: 'switch',
        part: 'switch',
        'aria-describedby': hint ? hint.id : undefined,
      },
      h('span', { class: 'track', 'aria-hidden': 'true' }),
      h('span', null, format(strings.offset, { price: money(model, model.credits) })),
    )
    offsetSwitch.addEventListener('click', actions.toggleCredits)
    offset = h('div', { part: 'offset' }, offsetSwitch, hint)
  }

  const projects = carbon?.credits.projects?.length
    ? h(
        'div',
        { part: 'projects' },
        h('h3', null, strings.projects),
        h(
          'ul',
          null,
          ...carbon.credits.projects.map((p) => {
            // A project not tied to one country (countryCode null) shows its name alone.
            const where = [p.location.state, p.location.countryName ?? p.location.countryCode].filter(Boolean).join(', ')
            return h('li', { part: 'project' }, p.name, where ? ` — ${where}` : null)
          }),
        ),
      )
    : null

  // Contribution choices: toggle buttons, at most one pressed, none at first.
  const contributionPartners = session.contribution.impactPartners
  const optionButtons = model.choices.map((choice, i) => {
    const label =
      choice.kind === 'roundUp'
        ? format(strings.roundUp, { total: money(model, choice.totalMinor ?? 0), amount: money(model, choice.minor) })
        : money(model, choice.minor)
    // The tick shows the pressed state without relying on colour; aria-pressed tells assistive technology.
    const button = h(
      'button',
      { type: 'button', class: 'option', part: 'option', 'aria-pressed': 'false' },
      h('span', { class: 'tick', 'aria-hidden': 'true' }, '✓ '),
      label,
    )
    button.addEventListener('click', () => actions.pick(i))
    return button
  })
  const contribution = optionButtons.length
    ? h(
        'div',
        { part: 'contribution' },
        h('h3', { id: 'canopy-contribution' }, strings.contribution),
        h('div', { role: 'group', 'aria-labelledby': 'canopy-contribution', class: 'options' }, ...optionButtons),
        contributionPartners.length
          ? h('p', { class: 'small' }, format(strings.contributionHint, { partners: names(contributionPartners) }))
          : null,
      )
    : null

  const shownPartners = [...(offset && carbon ? carbon.credits.impactPartners : []), ...(contribution ? contributionPartners : [])].filter(
    (p, i, all) => all.findIndex((q) => q.id === p.id) === i,
  )
  const partners = shownPartners.length
    ? h(
        'div',
        { part: 'partners' },
        h('h3', null, strings.partners),
        h('ul', { class: 'partners' }, ...shownPartners.map((p) => partnerItem(p, model))),
      )
    : null

  const rates = session.contribution.effectiveRates
  const texts = strings.disclosure
  // Without the API's figures (an older deployment), the payout time ekko documents: 30 to 60 days.
  const { collectingParty = null, payoutDays = { min: 30, max: 60 } } = session.disclosure ?? {}
  const disclosure =
    texts && contribution && contributionPartners.length
      ? h(
          'p',
          { part: 'disclosure', class: 'disclosure' },
          (collectingParty ? format(texts.collector, { collector: collectingParty }) : '') +
            format(texts.text, {
              partners: names(contributionPartners),
              days: format(payoutDays.min === payoutDays.max ? texts.daysExact : texts.days, {
                min: String(payoutDays.min),
                max: String(payoutDays.max),
              }),
              fee: formatPercent(rates.serviceFee + rates.serviceFeeTax, locale),
            }),
        )
      : null

  const interactive = Boolean(offset || contribution)
  // The one live region: what is selected, announced politely on every change.
  const summary = interactive ? h('p', { part: 'summary', class: 'summary', 'aria-live': 'polite' }) : null
  let confirm: HTMLButtonElement | null = null
  let actionsRow: HTMLElement | null = null
  if (interactive && model.type !== 'checkout') {
    confirm = h('button', { type: 'button', class: 'confirm', part: 'confirm', 'aria-disabled': 'true' }, strings.confirm)
    confirm.addEventListener('click', actions.confirm)
    const noThanks =
      model.type === 'takeover' ? h('button', { type: 'button', class: 'secondary', part: 'dismiss' }, strings.noThanks) : null
    noThanks?.addEventListener('click', actions.dismiss)
    actionsRow = h('div', { class: 'actions' }, confirm, noThanks)
  }

  const children: Child[] = [
    h('div', { class: 'head' }, title, close),
    h('p', { part: 'footprint' }, ...figure),
    equivalents,
    offset,
    contribution,
    projects,
    partners,
    disclosure,
    summary,
    actionsRow,
  ]
  const root = h('div', { part: 'root', class: `root ${model.type}`, lang: model.stringsLocale }, ...children)
  const dialog = model.type === 'takeover' ? h('dialog', { part: 'dialog', 'aria-labelledby': 'canopy-title' }, root) : undefined

  return {
    node: dialog ?? root,
    dialog,
    title,
    sync(selection, message) {
      offsetSwitch?.setAttribute('aria-checked', String(selection.credits))
      optionButtons.forEach((button, i) => button.setAttribute('aria-pressed', String(selection.choice === i)))
      confirm?.setAttribute('aria-disabled', String(!selection.credits && selection.choice < 0))
      if (summary) summary.textContent = message
    },
  }
}

/** The placeholder shown while loading: it reserves the widget's height so the page does not jump. */
export const buildSkeleton = (type: ElementType, strings: Strings): HTMLElement =>
  h('div', { part: 'skeleton', class: `skeleton ${type}`, 'aria-busy': 'true' }, h('span', { class: 'vh' }, strings.loading))
