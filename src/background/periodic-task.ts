export interface PeriodicTask {
  /** Stops the timer and waits for a run under way. */
  stop(): Promise<void>
}

/**
 * Runs `task` every `intervalMs`. A run that outlasts the interval is not joined by another;
 * a run that fails is told to `onError`, and the next one runs on schedule. The timer does not
 * keep the process alive. `task` gets `isStopped` to end a long run early, between batches.
 */
export function startPeriodicTask(
  task: (isStopped: () => boolean) => Promise<unknown>,
  options: { intervalMs: number; onError?: (error: unknown) => void },
): PeriodicTask {
  let running: Promise<void> | undefined
  let stopped = false
  const isStopped = () => stopped

  const timer = setInterval(() => {
    if (running || stopped) return
    running = task(isStopped)
      .then(
        () => undefined,
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        running = undefined
      })
  }, options.intervalMs)
  timer.unref()

  return {
    async stop(): Promise<void> {
      stopped = true
      clearInterval(timer)
      await running
    },
  }
}
