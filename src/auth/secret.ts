import { hash, randomBytes } from 'node:crypto'

const PREFIX = 'ck_'
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
/** 43 base62 characters carry 256 bits. */
const BODY_LENGTH = 43
const SECRET_PATTERN = new RegExp(`^${PREFIX}[0-9A-Za-z]{${BODY_LENGTH}}$`)

/**
 * A new API key secret: `ck_` and 43 random base62 characters (256 bits), which a double
 * click selects whole. Bytes of 248 and above are dropped so every character is equally likely.
 */
export function generateSecret(): string {
  let body = ''
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62]
    }
  }
  return PREFIX + body
}

export function isWellFormedSecret(value: string): boolean {
  return SECRET_PATTERN.test(value)
}

/**
 * What is stored instead of the secret. A fast hash is enough, and the right choice, for a
 * 256-bit random secret: there is nothing to brute-force, and it is looked up per request.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex')
}

/** The form shown in lists: enough to recognise a key, too little to use it. */
export function redactSecret(secret: string): string {
  return `${secret.slice(0, PREFIX.length + 4)}…${secret.slice(-4)}`
}
