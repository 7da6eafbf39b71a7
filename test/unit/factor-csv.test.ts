import { describe, expect, it } from 'vitest'
import { ImportError, parseFactorCsv } from '../../src/services/catalogue.js'

const HEADER = 'id,kind,mccFrom,mccTo,region,value,baseCurrency,priceYear,source,version,licence'

describe('parseFactorCsv', () => {
  it('reads factor rows, with optional tailpipe values and quoted notes', () => {
    const factors = parseFactorCsv(
      `${HEADER},tailpipeValue,note\n` +
        'fuel-gbr,carbon,5541,5542,GBR,0.33,EUR,2019,EXIOBASE,3,CC BY-SA 4.0,1.3,"tailpipe, assumed"\n' +
        'retail-world,nature,5000,5999,WORLD,0.1,EUR,2019,Illustrative,1,CC0,,\n',
    )
    expect(factors).toEqual([
      {
        id: 'fuel-gbr',
        kind: 'carbon',
        mccFrom: 5541,
        mccTo: 5542,
        region: 'GBR',
        value: '0.33',
        baseCurrency: 'EUR',
        priceYear: 2019,
        source: 'EXIOBASE',
        version: '3',
        licence: 'CC BY-SA 4.0',
        tailpipeValue: '1.3',
        note: 'tailpipe, assumed',
      },
      {
        id: 'retail-world',
        kind: 'nature',
        mccFrom: 5000,
        mccTo: 5999,
        region: 'WORLD',
        value: '0.1',
        baseCurrency: 'EUR',
        priceYear: 2019,
        source: 'Illustrative',
        version: '1',
        licence: 'CC0',
      },
    ])
  })

  it.each([
    ['a missing column', 'id,kind\nx,carbon\n', /missing column mccFrom/],
    ['an unknown column', `${HEADER},colour\nx,carbon,1,1,GBR,1,EUR,2020,s,v,l,red\n`, /unknown column colour/],
    ['no rows', `${HEADER}\n`, /no rows/],
    ['a bad kind', `${HEADER}\nx,water,1,1,GBR,1,EUR,2020,s,v,l\n`, /kind must be carbon or nature/],
    ['an MCC range backwards', `${HEADER}\nx,carbon,9,1,GBR,1,EUR,2020,s,v,l\n`, /mccFrom\/mccTo/],
    ['an unknown region', `${HEADER}\nx,carbon,1,1,GB,1,EUR,2020,s,v,l\n`, /region must be WORLD or an ISO 3166-1 alpha-3/],
    ['a negative value', `${HEADER}\nx,carbon,1,1,GBR,-1,EUR,2020,s,v,l\n`, /value must be a non-negative decimal/],
    ['an unpriced currency', `${HEADER}\nx,carbon,1,1,GBR,1,XXX,2020,s,v,l\n`, /unsupported baseCurrency XXX/],
    ['duplicate ids', `${HEADER}\nx,carbon,1,1,GBR,1,EUR,2020,s,v,l\nx,carbon,2,2,GBR,1,EUR,2020,s,v,l\n`, /duplicate id x/],
    ['a missing source', `${HEADER}\nx,carbon,1,1,GBR,1,EUR,2020,,v,l\n`, /source is required/],
    ['broken CSV', `${HEADER}\n"x,carbon\n`, /not valid CSV/],
  ])('rejects %s with a clear problem list', (_label, csv, problem) => {
    expect(() => parseFactorCsv(csv)).toThrow(ImportError)
    expect(() => parseFactorCsv(csv)).toThrow(problem)
  })
})
