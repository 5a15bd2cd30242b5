/**
 * When a failed delivery is tried again: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h
 * (the contract's schedule; WEBHOOK_RETRY_SCHEDULE replaces it), each delay lengthened by up
 * to 10 % at random so that deliveries failed together do not all come back at once. After
 * the last retry the delivery is failed.
 */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = Object.freeze([
  5, 300, 1800, 7200, 18_000, 36_000, 36_000,
])

/** The most a delay is lengthened by, as a fraction of it. */
export const RETRY_JITTER = 0.1

/** The longest delay accepted in a schedule: 30 days, in seconds. */
const MAX_DELAY_SECONDS = 30 * 24 * 60 * 60
const MAX_RETRIES = 100

/**
 * A schedule written as seconds separated by commas (`5,300,1800`, or `0.5,2` with at most 3
 * decimals; spaces around the numbers allowed), or undefined when it is not one: an empty
 * item, a number that is not plain decimal seconds, above 30 days, or more than 100 items.
 */
export function parseRetrySchedule(text: string): number[] | undefined {
  const items = text.split(',').map((item) => item.trim())
  if (items.length > MAX_RETRIES) return undefined
  const schedule: number[] = []
  for (const item of items) {
    if (!/^\d{1,8}(\.\d{1,3})?$/.test(item)) return undefined
    const seconds = Number(item)
    if (seconds > MAX_DELAY_SECONDS) return undefined
    schedule.push(seconds)
  }
  return schedule
}

/**
 * When the next attempt of a delivery is due, after `attemptsMade` attempts (1 or more) that
 * all failed, the last of them ending at `now`: `now` plus the schedule's delay for that retry
 * lengthened by `random() * 10 %` (`random` answers in [0, 1), as Math.random does); or
 * `'failed'` when every retry of the schedule has been made (attemptsMade > schedule length).
 */
export function nextAttemptAt(
  schedule: readonly number[],
  attemptsMade: number,
  now: Date,
  random: () => number,
): Date | 'failed' {
  if (!Number.isInteger(attemptsMade) || attemptsMade < 1) {
    throw new RangeError(`attemptsMade must be a whole number from 1, not ${attemptsMade}`)
  }
  const delaySeconds = schedule[attemptsMade - 1]
  if (delaySeconds === undefined) return 'failed'
  const jitter = Math.min(Math.max(random(), 0), 1) * RETRY_JITTER
  return new Date(now.getTime() + Math.round(delaySeconds * 1000 * (1 + jitter)))
}
