// Folders of src/ that import each other, counted from dependency-cruiser's JSON (each folder
// by its own files; a file at the top of src/ is a folder of its own). Exits 1 when a group
// of folders imports itself round, so that CI keeps the floors of docs/architecture.md.
// Run: npx tsx scripts/folder-cycles.ts
import { execFileSync } from 'node:child_process'

interface Cruised {
  modules: { source: string; dependencies: { resolved: string }[] }[]
}

const json = execFileSync(
  'npx',
  ['depcruise', 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
  { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
)
const folderOf = (path: string): string | undefined => {
  if (!path.startsWith('src/')) return undefined
  const folder = path.slice(4, path.lastIndexOf('/') + 1)
  return folder === '' ? path.slice(4) : folder
}
const arrows = new Map<string, Set<string>>()
for (const module of (JSON.parse(json) as Cruised).modules) {
  const from = folderOf(module.source)
  if (from === undefined) continue
  const targets = arrows.get(from) ?? new Set<string>()
  arrows.set(from, targets)
  for (const { resolved } of module.dependencies) {
    const to = folderOf(resolved)
    if (to !== undefined && to !== from) targets.add(to)
  }
}

// Tarjan's strongly connected components: each of more than one folder is a cycle.
const cycles: string[][] = []
const index = new Map<string, number>()
const low = new Map<string, number>()
const stack: string[] = []
const onStack = new Set<string>()
const visit = (folder: string): void => {
  index.set(folder, index.size)
  low.set(folder, index.get(folder)!)
  stack.push(folder)
  onStack.add(folder)
  for (const next of arrows.get(folder) ?? []) {
    if (!index.has(next)) {
      visit(next)
      low.set(folder, Math.min(low.get(folder)!, low.get(next)!))
    } else if (onStack.has(next)) {
      low.set(folder, Math.min(low.get(folder)!, index.get(next)!))
    }
  }
  if (low.get(folder) === index.get(folder)) {
    const component: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      component.push(member)
    } while (member !== folder)
    if (component.length > 1) cycles.push(component.sort())
  }
}
for (const folder of arrows.keys()) if (!index.has(folder)) visit(folder)

const mutual = [...arrows].flatMap(([from, targets]) =>
  [...targets]
    .filter((to) => from < to && arrows.get(to)?.has(from))
    .map((to) => `${from} <-> ${to}`),
)
console.log(
  `${arrows.size} folders; ${mutual.length} pairs import each other; ${cycles.length} cycles`,
)
for (const pair of mutual) console.log(`  pair: ${pair}`)
for (const cycle of cycles) console.log(`  cycle: ${cycle.join(' -> ')}`)
process.exit(cycles.length === 0 ? 0 : 1)
