/** Kept for the callers that import it from here: statements.ts holds it. */
export { readSynchronously } from './statements.js'
