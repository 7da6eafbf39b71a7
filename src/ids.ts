// Ids of the records Canopy creates. UUIDv7: random like v4 where it matters (unguessable, 74 random bits), but
// time-ordered, so primary-key inserts land on the right edge of the B-tree instead of a random page (fewer page
// splits, and far fewer full-page images in the WAL after each checkpoint). The creation time it reveals is
// already in every response (createdAt).
import { v7 as uuidv7 } from 'uuid'

export const newId = (): string => uuidv7()
