/** A mistake in how the command was called: one line on stderr, exit 2. */
export class UsageError extends Error {}

/** The command was understood but could not be done: one line on stderr, exit 1. */
export class CommandError extends Error {}

export interface Output {
  out(text: string): void
  err(text: string): void
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
}
