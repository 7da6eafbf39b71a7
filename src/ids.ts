// Ids of the records Canopy creates. UUIDv7 (RFC 9562): random like v4 where it matters (unguessable, 74 random bits),
// but time-ordered, so primary-key inserts land on the right edge of the B-tree instead of a random page (fewer page
// splits, and far fewer full-page images in the WAL after each checkpoint). The creation time it reveals is
// already in every response (createdAt).
//
// Made from a v4 UUID of Node's (crypto.randomUUID draws from a buffer of entropy filled 128 ids at a time, where a
// v7 library call fills 16 bytes of its own): the first 48 bits become the Unix time in ms and the version digit 7;
// the variant and the other 74 random bits stay as they are. Ids of one millisecond are not ordered among themselves
// (RFC 9562 makes that optional): nothing orders by id alone.
import { randomUUID } from 'node:crypto'

/** A UUIDv7 at `nowMs` (ms since the epoch, 0 ≤ nowMs < 2^48). */
export function uuidV7At(nowMs: number): string {
  const time = nowMs.toString(16).padStart(12, '0')
  // randomUUID(): xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx; from index 15 on, its random bits after the version digit.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${randomUUID().slice(15)}`
}

export const newId = (): string => uuidV7At(Date.now())
