/** The statements' old names, kept for the repositories that import them from here. */
export { statement as precompiled, type Statement as Precompiled } from './statements.js'
