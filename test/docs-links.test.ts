import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

/**
 * The docs link only inside the repository: a link that leaves it (`../shared/...`) or names a
 * file that is not there is broken in a clone. Every markdown file of the repository is read;
 * each link (inline, reference, autolink, bare URL, HTML `href`/`src`) outside code is resolved
 * from the file's folder, as GitHub and an editor resolve it, and must name a file or folder
 * of the repository; an anchor (`file.md#a-heading`, `#a-heading`) must name a heading of the
 * file it points to. An http(s) link is allowed only to the third-party pages below, which the
 * docs already cite for material that is not the project's own, and to the service itself on
 * this machine (`http://127.0.0.1:3000/...`, where the guides start it).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** Third-party pages the docs cite; a new one is added here on purpose, not by accident. */
const THIRD_PARTY = [
  'https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/', // docs/operations.md
  'https://fast-check.dev', // docs/testing.md
  'https://github.com/cure53/DOMPurify', // docs/admin.md
  'https://github.com/seriousme/openapi-schema-validator', // docs/testing.md
  'https://github.com/siimon/prom-client#default-metrics', // docs/operations.md
  'https://jqlang.github.io/jq/', // docs/api-tour.md
  'https://openapi-ts.dev', // README.md
  'https://www.standardwebhooks.com', // docs/webhooks.md
]

/**
 * The repository's files as a clone has them: tracked, or new and not ignored (so `dist/` and
 * `node_modules/` do not count). Without git, the files on disk outside those two.
 */
function repositoryFiles(): string[] {
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
  if (git.status === 0) return git.stdout.split('\0').filter((path) => path !== '')
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`
      if (['.git', 'node_modules', 'dist'].includes(entry.name)) return []
      return entry.isDirectory() ? walk(path) : [path]
    })
  return walk('')
}

/** The markdown's lines, with code (fenced blocks, inline spans) blanked out. */
function withoutCode(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line)
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined
      return ''
    }
    if (opening) {
      fence = opening[1]!
      return ''
    }
    return line.replace(/(`+)[\s\S]*?\1/g, 'code')
  })
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as `-`. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** The anchors a markdown file offers: its headings' (repeats numbered, as GitHub does). */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>()
  const counts = new Map<string, number>()
  let fence: string | undefined
  for (const line of markdown.split('\n')) {
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(line)
    if (fence !== undefined) {
      if (opening && opening[1]!.startsWith(fence)) fence = undefined
      continue
    }
    if (opening) {
      fence = opening[1]!
      continue
    }
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) {
      const base = slug(heading[1]!)
      const count = counts.get(base) ?? 0
      counts.set(base, count + 1)
      found.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1]!)
  }
  return found
}

/** Every link target of a markdown file, outside code, with its line. */
function links(markdown: string): { line: number; target: string }[] {
  const found: { line: number; target: string }[] = []
  withoutCode(markdown).forEach((text, index) => {
    const add = (target: string) => found.push({ line: index + 1, target })
    let rest = text
    const patterns = [
      /!?\[(?:[^\]\\]|\\.)*\]\(\s*<([^>]*)>[^)]*\)/g, // [text](<target>)
      /!?\[(?:[^\]\\]|\\.)*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g, // [text](target "title")
      /^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/g, // [ref]: target
      /<((?:https?|mailto|file|ftp):[^>\s]+)>/g, // <https://...>
      /\b(?:href|src)="([^"]+)"/g, // HTML
    ]
    for (const pattern of patterns) {
      rest = rest.replace(pattern, (_whole, target: string) => {
        add(target)
        return ' '
      })
    }
    // A bare URL is a link too on GitHub.
    for (const match of rest.matchAll(/\bhttps?:\/\/[^\s)<>]+/g))
      add(match[0].replace(/[.,;:]$/, ''))
  })
  return found
}

/** Why a link of `file` to `target` is broken, or undefined when it is not. */
function brokenBecause(
  file: string,
  target: string,
  files: Set<string>,
  folders: Set<string>,
  anchorsOf: (path: string) => Set<string>,
): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
    if (THIRD_PARTY.includes(target)) return undefined
    // The service the guides start on this machine (`npm start`), not a page elsewhere.
    if (/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?(\/|$)/.test(target)) return undefined
    return /^https?:/i.test(target)
      ? 'an http(s) link not in the list of third-party pages the docs cite'
      : 'a link that is neither a path of the repository nor a listed third-party page'
  }
  if (target.startsWith('/')) return 'an absolute path: the docs link by relative paths'
  const [rawPath = '', anchor] = target.split('#', 2)
  const path = decodeURIComponent(rawPath)
  const resolved =
    path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path)).replace(/\/$/, '')
  if (resolved === '..' || resolved.startsWith('../')) return 'a path outside the repository'
  const isFolder = folders.has(resolved) || resolved === '.'
  if (!files.has(resolved) && !isFolder) return `${resolved} is not a file of the repository`
  if (anchor !== undefined && anchor !== '') {
    if (isFolder || !resolved.endsWith('.md'))
      return `an anchor into ${resolved}, not a markdown file`
    if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) {
      return `${resolved} has no heading whose anchor is #${anchor}`
    }
  }
  return undefined
}

describe('links in the docs', () => {
  const files = new Set(repositoryFiles())
  const folders = new Set<string>()
  for (const file of files) {
    for (let dir = posix.dirname(file); dir !== '.'; dir = posix.dirname(dir)) folders.add(dir)
  }
  const markdownFiles = [...files].filter((file) => file.endsWith('.md')).sort()
  const cache = new Map<string, Set<string>>()
  const anchorsOf = (path: string) => {
    let found = cache.get(path)
    if (!found) cache.set(path, (found = anchors(readFileSync(join(ROOT, path), 'utf8'))))
    return found
  }

  it('finds the markdown files and their links', () => {
    assert.ok(markdownFiles.includes('README.md') && markdownFiles.includes('docs/api-tour.md'))
    const sample = [
      '[a](x.md) ![b](img/y.png "t") [c](<z w.md>) `[no](code.md)`',
      '[ref]: https://example.com/r',
      'see <https://example.com/a>, <a href="h.md">h</a> and https://example.com/b.',
      '```',
      '[no](fenced.md)',
      '```',
    ].join('\n')
    assert.deepEqual(
      links(sample)
        .map((link) => link.target)
        .sort(),
      [
        'x.md',
        'img/y.png',
        'z w.md',
        'https://example.com/r',
        'https://example.com/a',
        'h.md',
        'https://example.com/b',
      ].sort(),
    )
    assert.ok(
      anchors('# Safe retries (Idempotency-Key)\n## `a_b` c').has('safe-retries-idempotency-key'),
    )
    assert.ok(anchors('## `a_b` c').has('a_b-c'))
    const broken = (target: string) => brokenBecause('docs/x.md', target, files, folders, anchorsOf)
    assert.match(broken('../../shared/spec/CONTRACT.md')!, /outside the repository/)
    assert.match(broken('missing.md')!, /not a file/)
    assert.match(broken('api-tour.md#no-such-heading')!, /no heading/)
    assert.match(broken('https://example.com')!, /third-party/)
    assert.equal(broken('http://127.0.0.1:3000/admin'), undefined)
    assert.equal(broken('api-tour.md#the-events-feed'), undefined)
    assert.equal(broken('decisions/'), undefined)
    assert.equal(broken('../README.md#quick-start'), undefined)
  })

  for (const file of markdownFiles) {
    it(`${file} links only to files and headings of the repository`, () => {
      const problems = links(readFileSync(join(ROOT, file), 'utf8')).flatMap(({ line, target }) => {
        const why = brokenBecause(file, target, files, folders, anchorsOf)
        return why === undefined ? [] : [`${file}:${line}: (${target}): ${why}`]
      })
      assert.deepEqual(problems, [])
    })
  }
})
