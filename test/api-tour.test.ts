import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { it } from 'node:test'
import { createKey, startServe, tempDir } from './process-helpers.js'

/**
 * docs/api-tour.md says every request in it was run, in order, against a fresh server, and
 * each `#` line under a request is the answer it gave. This test holds it to that: it runs
 * every shell block of the guide, in order, in one shell, against `catalog serve` on a new
 * SQLite database, and compares each request's output with the answer written under it
 * (`…` stands for anything, as the guide says).
 */

const TOUR = new URL('../docs/api-tour.md', import.meta.url)

/** One command of the guide (its continuation lines joined) and the answer written under it. */
interface Step {
  line: number
  command: string
  answer: string | undefined
}

/**
 * The steps of the guide's ```sh blocks. A `#` line right under a command is its answer (a
 * line starting `#  ` continues the one before, as the guide wraps long JSON); a `#` line
 * after a blank line says what the next command does. An answer's note after two or more
 * spaces, `(…)`, is the guide's comment, not output.
 */
function tourSteps(markdown: string): Step[] {
  const steps: Step[] = []
  let inBlock = false
  let current: Step | undefined
  let continuing = false
  let answering = false
  const lines = markdown.split('\n')
  lines.forEach((text, index) => {
    if (text.startsWith('```')) {
      inBlock = text.trim() === '```sh' && !inBlock ? true : false
      current = undefined
      answering = false
      return
    }
    if (!inBlock) return
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
      current = { line: index + 1, command: text, answer: undefined }
      steps.push(current)
    }
    continuing = text.trimEnd().endsWith('\\')
    answering = !continuing
  })
  return steps
}

/** The answer as a pattern: `…` is any text (also across lines), the rest is literal. */
function answerPattern(answer: string): RegExp {
  const escaped = answer.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${escaped.join('[\\s\\S]*?')}$`)
}

const MARK = '@@ api-tour step done @@'

it('docs/api-tour.md: every request, run in order against a fresh server, answers what the guide shows', async (t) => {
  const tools = spawnSync('bash', ['-c', 'command -v curl && command -v jq'])
  if (tools.status !== 0) {
    t.skip('curl and jq are needed to run the guide')
    return
  }
  const dir = await tempDir(t)
  const databaseUrl = `sqlite:${dir}/catalog.db`
  const server = await startServe(t, { DATABASE_URL: databaseUrl })
  const { key } = await createKey(databaseUrl, 'default')

  const steps = tourSteps(readFileSync(TOUR, 'utf8'))
  assert.ok(steps.filter((step) => step.answer !== undefined).length >= 20, 'the guide has answers')
  const script = steps
    .map((step) => {
      const command = step.command.startsWith('KEY=')
        ? `KEY=${key}`
        : step.command.startsWith('BASE=')
          ? `BASE=${server.url}/api/commerce/v1`
          : step.command
      return `${command}\necho; echo '${MARK}'`
    })
    .join('\n')
  const run = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 120_000 })
  assert.equal(run.status, 0, run.stderr)
  const outputs = run.stdout.split(`${MARK}\n`)

  const differing = steps.flatMap((step, i) => {
    const output = (outputs[i] ?? '').replace(/\r/g, '').trimEnd()
    if (step.answer === undefined || answerPattern(step.answer).test(output)) return []
    return [`line ${step.line}: ${step.command}\n  shows:    ${step.answer}\n  answered: ${output}`]
  })
  assert.equal(
    differing.length,
    0,
    `docs/api-tour.md differs from the answers:\n${differing.join('\n')}`,
  )
  await server.stop('SIGTERM')
})
