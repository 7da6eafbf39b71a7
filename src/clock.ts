// Time is a dependency: services read it from a Clock, so tests can control it (src/domain never reads it).
export type Clock = () => Date

export const systemClock: Clock = () => new Date()
