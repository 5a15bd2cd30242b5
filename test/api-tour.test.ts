import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { describeEachDialect } from './helpers.js'
import { databaseUrlFor, SECRET_PATTERN, startServe, tempDir } from './process-helpers.js'

/**
 * docs/api-tour.md says every request in it was run, in order, against a fresh server, right
 * after the README's own first request, and each `#` line under a request is the answer it
 * gave. This test holds both documents to that: on each database it starts `catalog serve`
 * on an empty one (a real listening server, as a user's curl hits it), takes the key the
 * server prints at its first start, runs the README's first-request block and then every
 * shell block of the guide, in order, in one shell, and compares each request's output with
 * the answer written under it (`…` stands for anything, as the guides say; see `answers`).
 */

const README = new URL('../README.md', import.meta.url)
const TOUR = new URL('../docs/api-tour.md', import.meta.url)

/** One command of a guide (its continuation lines joined) and the answer written under it. */
interface Step {
  file: string
  line: number
  command: string
  answer: string | undefined
}

/** The ```sh blocks of a markdown file: each with the line number of its first line. */
function shellBlocks(markdown: string): { line: number; lines: string[] }[] {
  const blocks: { line: number; lines: string[] }[] = []
  let current: { line: number; lines: string[] } | undefined
  let fenced = false
  markdown.split('\n').forEach((text, index) => {
    if (text.startsWith('```')) {
      if (!fenced && text.trim() === '```sh') {
        current = { line: index + 2, lines: [] }
        blocks.push(current)
      } else {
        current = undefined
      }
      fenced = !fenced
      return
    }
    current?.lines.push(text)
  })
  return blocks
}

/**
 * The steps of shell blocks. A `#` line right under a command is its answer (a line starting
 * `#  ` continues the one before, as the guides wrap long JSON); a `#` line after a blank line
 * says what the next command does. An answer's note after two or more spaces, `(…)`, is the
 * guide's comment, not output.
 */
function shellSteps(file: string, blocks: { line: number; lines: string[] }[]): Step[] {
  const steps: Step[] = []
  for (const block of blocks) {
    let current: Step | undefined
    let continuing = false
    let answering = false
    block.lines.forEach((text, index) => {
      if (text.trim() === '') {
        current = undefined
        answering = false
        return
      }
      if (text.startsWith('#')) {
        if (current === undefined || !answering) return
        const content = text.replace(/^#\s?/, '')
        const wrapped = /^#\s{2,}/.test(text)
        const answerLine = content.replace(/\s{2,}\(.*\)$/, '').trimStart()
        current.answer =
          current.answer === undefined
            ? answerLine
            : wrapped
              ? current.answer + answerLine
              : `${current.answer}\n${answerLine}`
        return
      }
      if (continuing && current) {
        current.command += `\n${text}`
      } else {
        current = { file, line: block.line + index, command: text, answer: undefined }
        steps.push(current)
      }
      continuing = text.trimEnd().endsWith('\\')
      answering = !continuing
    })
  }
  return steps
}

type Token = { literal: string } | { anyString: true } | { anything: true }

/**
 * The documented answer cut into literal text and placeholders: `"…"` is one JSON string (an
 * id, a time, a cursor), any other `…` is any text (also across lines) that closes no bracket
 * it did not open, so that `[{"name":"Mug",…}]` does not match a list of two products.
 */
function tokens(answer: string): Token[] {
  const result: Token[] = []
  answer.split('"…"').forEach((piece, i) => {
    if (i > 0) result.push({ literal: '"' }, { anyString: true }, { literal: '"' })
    piece.split('…').forEach((part, j) => {
      if (j > 0) result.push({ anything: true })
      if (part !== '') result.push({ literal: part })
    })
  })
  return result
}

/** Whether the output is the documented answer, its placeholders standing for what they say. */
function answers(output: string, answer: string): boolean {
  const parts = tokens(answer)
  const seen = new Map<string, boolean>()
  const from = (k: number, at: number): boolean => {
    if (k === parts.length) return at === output.length
    const key = `${k}:${at}`
    const known = seen.get(key)
    if (known !== undefined) return known
    let result = false
    const part = parts[k]!
    if ('literal' in part) {
      result = output.startsWith(part.literal, at) && from(k + 1, at + part.literal.length)
    } else if ('anyString' in part) {
      let end = at
      while (end < output.length && output[end] !== '"') end += output[end] === '\\' ? 2 : 1
      result = end < output.length && from(k + 1, end)
    } else {
      let depth = 0
      for (let end = at; end <= output.length && depth >= 0 && !result; end++) {
        result = from(k + 1, end)
        const char = output[end]
        if (char === '{' || char === '[') depth++
        if (char === '}' || char === ']') depth--
      }
    }
    seen.set(key, result)
    return result
  }
  return from(0, 0)
}

/** The README's first request: its one shell block that starts by setting KEY. */
function readmeSteps(): Step[] {
  const blocks = shellBlocks(readFileSync(README, 'utf8')).filter((block) =>
    block.lines[0]?.startsWith('KEY='),
  )
  assert.equal(blocks.length, 1, 'README.md has one shell block that starts with KEY=')
  return shellSteps('README.md', blocks)
}

function tourSteps(): Step[] {
  return shellSteps('docs/api-tour.md', shellBlocks(readFileSync(TOUR, 'utf8')))
}

const MARK = '@@ api-tour step done @@'
/** Where the guides say the server listens (`npm start`'s default). */
const DOCUMENTED_ORIGIN = 'http://127.0.0.1:3000'

describe('the answers of the guides, matched', () => {
  it('"…" stands for one JSON string, … for anything; the rest must be equal', () => {
    const mug = '{"data":{"id":"…","name":"Mug",…,"version":1,…}}'
    assert.ok(answers('{"data":{"id":"0192","name":"Mug","price":0,"version":1,"tags":[]}}', mug))
    assert.ok(!answers('{"data":{"id":"0192","name":"Cup","version":1}}', mug))
    assert.ok(!answers('{"data":{"id":"0192","name":"Mug","version":2}}', mug))
    assert.ok(!answers('{"data":{"id":"1","x":"2","name":"Mug","version":1}}', mug))
    const list = '{"data":[{"id":"…","name":"Mug",…}],"nextCursor":null}'
    assert.ok(answers('{"data":[{"id":"1","name":"Mug","tags":["a"]}],"nextCursor":null}', list))
    assert.ok(!answers('{"data":[{"id":"1","name":"Mug"},{"id":"2"}],"nextCursor":null}', list))
  })

  it('every documented answer says something: a literal besides … and punctuation', () => {
    for (const step of [...readmeSteps(), ...tourSteps()]) {
      if (step.answer === undefined) continue
      assert.match(step.answer.replace(/…/g, ''), /[0-9A-Za-z]{2}/, `${step.file}:${step.line}`)
    }
  })
})

describeEachDialect('the README first request, then docs/api-tour.md', (dialect) => {
  it('every request, run in order against a fresh server, answers what the docs show', async (t) => {
    const tools = spawnSync('bash', ['-c', 'command -v curl && command -v jq'])
    if (tools.status !== 0) {
      t.skip('curl and jq are needed to run the guides')
      return
    }
    const dir = await tempDir(t)
    const server = await startServe(t, { DATABASE_URL: await databaseUrlFor(t, dialect) })
    // The key the server prints at its first start, as the README's user copies it.
    const [key] = await server.waitForOutput(SECRET_PATTERN)

    const steps = [...readmeSteps(), ...tourSteps()]
    assert.ok(
      steps.filter((step) => step.answer !== undefined).length >= 30,
      'the docs have answers',
    )
    const script = steps
      .map((step) => {
        let command = step.command.replaceAll(DOCUMENTED_ORIGIN, server.url)
        if (command.startsWith('KEY=')) {
          assert.match(command, /^KEY=ck_\.\.\. /, `${step.file}:${step.line} sets KEY=ck_...`)
          command = command.replace('ck_...', key)
        }
        return `${command}\necho; echo '${MARK}'`
      })
      .join('\n')
    const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 120_000 })
    assert.equal(run.status, 0, run.stderr)
    const outputs = run.stdout.split(`${MARK}\n`)
    assert.equal(outputs.length, steps.length + 1, 'one output per step')

    const differing = steps.flatMap((step, i) => {
      const output = (outputs[i] ?? '').replace(/\r/g, '').trimEnd()
      if (step.answer === undefined || answers(output, step.answer)) return []
      return [
        `${step.file}:${step.line}: ${step.command}\n  shows:    ${step.answer}\n  answered: ${output}`,
      ]
    })
    assert.equal(differing.length, 0, `the docs differ from the answers:\n${differing.join('\n')}`)
    await server.stop('SIGTERM')
  })
})
