import { RE2JS } from 're2js'

/** A user's pattern, run by an RE2 engine: time linear in the text, never backtracking. */
export interface LinearPattern {
  matchesWhole(text: string): boolean
}

/**
 * Compiles a definition's `regex` with re2js (RE2's semantics in pure JavaScript): a pattern
 * that needs backtracking (back-references, lookaround) is not RE2 syntax and is refused,
 * with the engine's reason. A user's pattern never reaches a JavaScript RegExp.
 */
export function compileLinearPattern(source: string): LinearPattern | string {
  try {
    const pattern = RE2JS.compile(source)
    return { matchesWhole: (text) => pattern.matches(text) }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return `must be a pattern that runs in linear time (no back-references or lookaround): ${reason}`
  }
}
