// The timer a background worker runs on: a first run at start, then each next run a delay after the previous one
// ended (the run says how long), so two runs never overlap; unref'd, so it never holds the process open.
import { setTimeout as delay } from 'node:timers/promises'

/** How long stop() waits for a run in progress before the database is closed under it. */
const STOP_WAIT_MS = 500

export class PeriodicRun {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private halted = true

  /** `run` resolves with the delay before the next run, in ms; it handles its own failures and never rejects. */
  constructor(private readonly run: () => Promise<number>) {}

  /** Whether stop() has been called (or start() not yet): a run failing now may be the shutdown's doing. */
  get stopped(): boolean {
    return this.halted
  }

  start(): void {
    if (!this.halted) return
    this.halted = false
    this.schedule(0)
  }

  /**
   * Stops and waits a moment for a run in progress. Not longer: on a frozen link it would hold shutdown for the whole
   * query bound, and each worker finishes a run cut short at its next one.
   */
  async stop(): Promise<void> {
    this.halted = true
    if (this.timer) clearTimeout(this.timer)
    await Promise.race([this.running, delay(STOP_WAIT_MS, undefined, { ref: false })])
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => this.tick(), delayMs)
    this.timer.unref()
  }

  private tick(): void {
    if (this.halted) return
    this.running = this.run().then((next) => {
      if (!this.halted) this.schedule(next)
    })
  }
}
