/**
 * What a run must undo however it ends (children, temp dirs, databases): registered as it is
 * made, undone in reverse order once, on a normal end, a failure or a signal.
 */
export interface Cleanup {
  /** Registers an undo step; the returned function runs it early and unregisters it. */
  add(label: string, undo: () => Promise<void> | void): () => Promise<void>
  /** Runs every step still registered, newest first; a failing step does not stop the rest. */
  runAll(): Promise<void>
}

export function createCleanup(log: (line: string) => void = console.error): Cleanup {
  const steps: { label: string; undo: () => Promise<void> | void }[] = []
  let running: Promise<void> | undefined
  /** Steps run early (a server stopped after its scenarios) that have not finished yet. */
  const early = new Set<Promise<void>>()

  async function run(step: { label: string; undo: () => Promise<void> | void }): Promise<void> {
    try {
      await step.undo()
    } catch (error) {
      log(`cleanup: ${step.label} failed: ${error instanceof Error ? error.message : error}`)
    }
  }

  return {
    add(label, undo) {
      const step = { label, undo }
      steps.push(step)
      return async () => {
        const index = steps.indexOf(step)
        if (index === -1) return
        steps.splice(index, 1)
        const done = run(step)
        early.add(done)
        await done
        early.delete(done)
      }
    },
    runAll() {
      // A signal's cleanup and the main flow's may overlap: both wait for the same pass.
      running ??= (async () => {
        for (let step = steps.pop(); step; step = steps.pop()) await run(step)
        await Promise.all(early)
      })().finally(() => (running = undefined))
      return running
    },
  }
}

/**
 * Ctrl-C, SIGTERM or SIGHUP: clean up, then exit with 128 + the signal's number. A second
 * signal while cleaning up exits at once. The returned function tells whether a signal came.
 */
export function cleanUpOnSignals(cleanup: Cleanup): () => boolean {
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const
  let stopping = false
  for (const [signal, code] of Object.entries(codes)) {
    process.on(signal, () => {
      if (stopping) process.exit(code)
      stopping = true
      console.error(`\n${signal}: stopping, cleaning up (again to exit at once)`)
      void cleanup.runAll().finally(() => process.exit(code))
    })
  }
  return () => stopping
}
