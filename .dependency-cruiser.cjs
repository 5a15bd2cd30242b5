/**
 * The layers of src/ (docs/architecture.md), checked in CI by `npm run lint:deps`:
 * no cycles, and arrows that point down only.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one: neither can be read, tested or changed alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'db-is-the-bottom',
      severity: 'error',
      comment: 'db/ opens databases and runs statements; it knows nothing of what is stored.',
      from: { path: '^src/db/' },
      to: { path: '^src/(?!db/)' },
    },
    {
      name: 'http-kit-is-generic',
      severity: 'error',
      comment:
        'http/ is the route kit: it serves every feature and imports none (the names of the ' +
        'scopes, which the OpenAPI document lists, are a vocabulary, not a feature).',
      from: { path: '^src/http/' },
      to: {
        path: '^src/(catalog|events|webhooks|import|auth|idempotency|admin|cli|search|attributes|collections)/',
        pathNot: '^src/auth/scopes\\.ts$',
      },
    },
    {
      name: 'outbox-below-catalog',
      severity: 'error',
      comment: 'The event outbox is written by the catalogue: it must not import the catalogue.',
      from: { path: '^src/events/outbox' },
      to: { path: '^src/(catalog|import|webhooks|search|attributes|collections)/' },
    },
    {
      name: 'catalog-writes-events-through-the-outbox',
      severity: 'error',
      comment: 'The catalogue names its events through the outbox; the feed sits above it.',
      from: { path: '^src/catalog/' },
      to: { path: '^src/events/', pathNot: '^src/events/outbox\\.ts$' },
    },
    {
      name: 'catalog-below-import-and-webhooks',
      severity: 'error',
      comment: 'Import and webhooks use the catalogue; the catalogue never uses them.',
      from: { path: '^src/catalog/' },
      to: { path: '^src/(import|webhooks|cli|admin)/' },
    },
    {
      name: 'nothing-imports-the-entry-points',
      severity: 'error',
      comment: 'server.ts and cli/ start the process: they import, nothing imports them.',
      from: { path: '^src/(?!cli/|server\\.ts)' },
      to: { path: '^src/(cli/|server\\.ts)' },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports is dead code (migrations are found by the migrator).',
      from: {
        orphan: true,
        pathNot: [
          '\\.d\\.ts$',
          '^src/db/migrations/',
          '^src/cli/main\\.ts$',
          '^src/webhooks/sender-worker\\.ts$',
        ],
      },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
}
