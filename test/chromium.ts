import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium, driven by playwright-core: no browser download (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium'

/** Why browser tests are skipped on this machine, or false when Chromium is there. */
export const chromiumMissing: string | false = existsSync(CHROMIUM)
  ? false
  : `no Chromium at ${CHROMIUM}: apt-get install chromium`

/** A headless Chromium with a fresh profile that reaches for nothing but the page under test. */
export function launchChromium(timeoutMs = 30_000): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    timeout: timeoutMs,
  })
}
