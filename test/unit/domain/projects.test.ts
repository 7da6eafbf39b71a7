import { describe, expect, it } from 'vitest'
import { selectContributionPartners, selectCreditProjects } from '../../../src/domain/projects.js'
import type { ConsumerLocation } from '../../../src/domain/types.js'
import { partner, project } from './fixtures.js'

const catalogue = [
  project({ id: 'us-ca-1', location: { countryCode: 'USA', state: 'CA' }, priority: 1 }),
  project({ id: 'us-ca-2', location: { countryCode: 'USA', state: 'California' }, priority: 5 }),
  project({ id: 'us-tx', location: { countryCode: 'USA', state: 'TX' }, priority: 9 }),
  project({ id: 'us-none', location: { countryCode: 'USA', state: null }, priority: 3 }),
  project({ id: 'gb-1', location: { countryCode: 'GBR', state: null }, priority: 2 }),
  project({ id: 'ke-1', location: { countryCode: 'KE', state: null }, priority: 7 }),
  project({ id: 'global-a', priority: 8 }),
  project({ id: 'global-b', priority: 8 }),
  project({ id: 'inactive-us-ca', location: { countryCode: 'USA', state: 'CA' }, priority: 100, active: false }),
  project({ id: 'zero-weight-gb', location: { countryCode: 'GBR', state: null }, priority: 100, weight: '0' }),
]

describe('selectCreditProjects: state → country → global', () => {
  it.each<[string, ConsumerLocation, boolean, string[], string]>([
    [
      'a Californian consumer: the two California projects (any spelling), by priority',
      { countryCode: 'USA', state: 'ca' },
      true,
      ['us-ca-2', 'us-ca-1'],
      'state',
    ],
    [
      'a New York consumer: no NY project → all US projects, top 3 by priority',
      { countryCode: 'USA', state: 'NY' },
      true,
      ['us-tx', 'us-ca-2', 'us-none'],
      'country',
    ],
    ['a US consumer without a state: country', { countryCode: 'USA' }, true, ['us-tx', 'us-ca-2', 'us-none'], 'country'],
    [
      'a UK consumer: the active UK project only (zero weight excluded)',
      { countryCode: 'GBR', state: 'London' },
      true,
      ['gb-1'],
      'country',
    ],
    ['an alpha-2 catalogue country still matches a Kenyan consumer', { countryCode: 'KEN' }, true, ['ke-1'], 'country'],
    [
      'a French consumer: nothing in France → global, priority desc then id',
      { countryCode: 'FRA' },
      true,
      ['us-tx', 'global-a', 'global-b'],
      'global',
    ],
    [
      'matching off: global even for a Californian',
      { countryCode: 'USA', state: 'CA' },
      false,
      ['us-tx', 'global-a', 'global-b'],
      'global',
    ],
  ])('%s', (_, consumer, match, ids, accuracy) => {
    const selection = selectCreditProjects(catalogue, consumer, match)
    expect(selection.projects.map((p) => p.id)).toEqual(ids)
    expect(selection.accuracy).toBe(accuracy)
  })

  it('returns nothing when no project is active', () => {
    expect(selectCreditProjects([project({ id: 'x', active: false })], { countryCode: 'GBR' }, true)).toEqual({
      projects: [],
      accuracy: 'global',
    })
  })

  it('never returns more than three', () => {
    const many = Array.from({ length: 10 }, (_, i) => project({ id: `p${i}`, priority: i }))
    expect(selectCreditProjects(many, { countryCode: 'GBR' }, false).projects.map((p) => p.id)).toEqual(['p9', 'p8', 'p7'])
  })
})

describe('selectContributionPartners', () => {
  it('takes active contribution partners by priority then id, at most three', () => {
    const partners = [
      partner({ id: 'c', kind: 'contribution', priority: 1 }),
      partner({ id: 'credits', kind: 'credits', priority: 99 }),
      partner({ id: 'b', kind: 'contribution', priority: 5 }),
      partner({ id: 'off', kind: 'contribution', priority: 50, active: false }),
      partner({ id: 'a', kind: 'contribution', priority: 5 }),
      partner({ id: 'd', kind: 'contribution', priority: 0 }),
    ]
    expect(selectContributionPartners(partners).map((p) => p.id)).toEqual(['a', 'b', 'c'])
  })
})
