/**
 * Money is stored as a whole number of ten-thousandths: the contract allows four decimal
 * places and at most 1,000,000,000, so every amount is an exact integer below 2^53.
 * Dividing it back gives the same double the client's JSON number parsed to.
 */
const SCALE = 10_000

export function toStoredAmount(amount: number): number {
  return Math.round(amount * SCALE)
}

export function fromStoredAmount(stored: number): number {
  return stored / SCALE
}

export function toStoredAmountOrNull(amount: number | null | undefined): number | null {
  return amount === null || amount === undefined ? null : toStoredAmount(amount)
}

export function fromStoredAmountOrNull(stored: number | null): number | null {
  return stored === null ? null : fromStoredAmount(stored)
}
