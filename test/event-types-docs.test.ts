import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { EVENT_TYPES } from '../src/outbox/event-types.js'

/**
 * The event types the service sends (EVENT_TYPES: the outbox, the feed's filter and the
 * endpoints' `events` all read it) are the ones docs/webhooks.md documents, in the same order:
 * a type added to the code without its row in the guide fails here, and so does a row left
 * behind.
 */
const GUIDE = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8')

/** The section `## <title>` of the guide, up to the next `## `. */
function section(title: string): string {
  const start = GUIDE.indexOf(`\n## ${title}\n`)
  assert.notEqual(start, -1, `docs/webhooks.md has a "## ${title}" section`)
  const end = GUIDE.indexOf('\n## ', start + 1)
  return GUIDE.slice(start, end === -1 ? undefined : end)
}

const NUMBER_WORDS = 'zero one two three four five six seven eight nine ten eleven twelve'.split(
  ' ',
)

describe('the documented event types are the ones the service sends', () => {
  const text = section('Event types')

  it('docs/webhooks.md has one row per type of EVENT_TYPES, in its order', () => {
    const documented = [...text.matchAll(/^\| `([a-z_]+\.[a-z_]+)` +\|/gm)].map((m) => m[1])
    assert.deepEqual(documented, [...EVENT_TYPES])
    // Each row says when, what data.object is, and the delivery's subject.
    for (const line of text.split('\n').filter((l) => /^\| `[a-z_]+\./.test(l))) {
      const cells = line.split(/(?<!\\)\|/).slice(1, -1)
      assert.equal(cells.length, 4, line)
      for (const cell of cells) assert.notEqual(cell.trim(), '', line)
    }
  })

  it('the number of types the guide states is the number there are', () => {
    const stated = [...GUIDE.matchAll(/\b(?:these|all) ([a-z]+)(?: types)?\b/g)]
      .map((m) => m[1]!)
      .filter((word) => NUMBER_WORDS.includes(word))
    assert.ok(stated.length > 0, 'the guide says how many types there are')
    for (const word of stated) assert.equal(NUMBER_WORDS.indexOf(word), EVENT_TYPES.length, word)
  })
})
