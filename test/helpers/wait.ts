// Polling for a state another process or a timer brings about.

/** Probes every 50 ms until `done` holds or `timeoutMs` passes; the last value probed either way (the test asserts it). */
export async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (done(value) || Date.now() > deadline) return value
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
