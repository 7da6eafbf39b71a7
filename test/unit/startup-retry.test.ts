// Which start-up failures are worth waiting for (a database on its way) and which are reported at once.
import { describe, expect, it } from 'vitest'
import { errorCode, isTransientConnectError } from '../../src/db/connect.js'

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code })

describe('isTransientConnectError', () => {
  it.each([
    ['refused', withCode('ECONNREFUSED')],
    ['reset', withCode('ECONNRESET')],
    ['DNS not there yet', withCode('ENOTFOUND')],
    ['DNS try again', withCode('EAI_AGAIN')],
    ['a client-side timeout', withCode('ETIMEDOUT')],
    ['the server is starting up (57P03)', withCode('57P03')],
    ['too many connections (53300)', withCode('53300')],
    ['every address refused (AggregateError)', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], '')],
    ['the pool gave up waiting', new Error('timeout exceeded when trying to connect')],
    ['the connection timed out', new Error('Connection terminated due to connection timeout')],
    ['the server went away', new Error('Connection terminated unexpectedly')],
  ])('%s: retried', (_, error) => {
    expect(isTransientConnectError(error)).toBe(true)
  })

  it.each([
    ['bad password (28P01)', withCode('28P01')],
    ['unknown role (28000)', withCode('28000')],
    ['unknown database (3D000)', withCode('3D000')],
    ['a bug', new TypeError('undefined is not a function')],
    ['not an error', 'boom'],
  ])('%s: reported at once', (_, error) => {
    expect(isTransientConnectError(error)).toBe(false)
  })

  it('reads the code of the first error of an AggregateError', () => {
    expect(errorCode(new AggregateError([withCode('ECONNREFUSED')], ''))).toBe('ECONNREFUSED')
    expect(errorCode(new Error('no code'))).toBeUndefined()
  })
})
