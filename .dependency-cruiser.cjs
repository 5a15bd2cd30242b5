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
        'http/ is the route kit (prefix, schemas, cursors, scopes): it serves every feature and imports none.',
      from: { path: '^src/http/' },
      to: { path: '^src/(?!db/|http/|errors\\.ts$)' },
    },
    {
      name: 'shared-pieces-are-the-floor',
      severity: 'error',
      comment:
        'The event outbox and the slug claims are written by every feature: they know only db/.',
      from: { path: '^src/(outbox|slugs)/' },
      to: { path: '^src/(?!db/|outbox/|slugs/|errors\\.ts$)' },
    },
    {
      name: 'maintainers-below-catalog',
      severity: 'error',
      comment:
        'What keeps derived data exact at commit (search documents, memberships, metafield ' +
        'values and their index) sits below the catalogue: it never imports the catalogue, ' +
        "the features' query and API sides, or anything above them (docs/architecture.md).",
      from: { path: '^src/(search/documents|collections/membership|attributes/values)/' },
      to: {
        path: '^src/(catalog|events|import|webhooks|cli|admin|idempotency|auth)/|^src/(search|collections|attributes)/[^/]+$|^src/(app|server)\\.ts$',
      },
    },
    {
      name: 'maintainers-in-order',
      severity: 'error',
      comment:
        'Among the maintainers: metafield values at the bottom, then search documents, then ' +
        'memberships (whose rules read both).',
      from: { path: '^src/(attributes/values|search/documents)/' },
      to: { path: '^src/collections/' },
    },
    {
      name: 'values-below-documents',
      severity: 'error',
      comment: 'Metafield values know nothing of search: search documents read their texts.',
      from: { path: '^src/attributes/values/' },
      to: { path: '^src/search/' },
    },
    {
      name: 'catalog-below-the-feature-apis',
      severity: 'error',
      comment:
        'The catalogue writes through the maintainers; the query and API sides of search, ' +
        'collections, attributes and the events feed sit above it and may read it.',
      from: { path: '^src/catalog/' },
      to: { path: '^src/(search|collections|attributes)/[^/]+$|^src/events/' },
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
