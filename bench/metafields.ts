/**
 * Issue 35's write figures, on one dialect: one service, 20 metafield definitions of its store
 * (half filterable), and creates and PATCHes with 20 values and without, measured in turn on
 * the same server: with / without >= 0.8 (goal).
 */
import { figureMaker, measureInTurn, type Figure, type Session } from './measure.js'
import { API, METAFIELD_DEFINITIONS, SCENARIOS, type Spec } from './scenarios.js'
import { countStored, startService, type Dialect } from './servers.js'
import { apiClient, ratio } from './support.js'

export async function runMetafields(session: Session, dialect: Dialect): Promise<Figure[]> {
  const { context, found, log } = session
  const server = await startService(context, dialect)
  try {
    const api = apiClient(server.url, server.key)
    for (const definition of METAFIELD_DEFINITIONS) {
      await api.json('POST', `${API}/metafield-definitions`, definition)
    }
    const spec = async (name: keyof typeof SCENARIOS): Promise<Spec[]> => [
      { scenario: name, targets: await SCENARIOS[name].seed(api) },
    ]
    const figure = figureMaker('metafields', dialect)
    const figures: Figure[] = []
    for (const [what, plain, with20] of [
      ['creates', 'create-product', 'create-product-metafields'],
      ['PATCHes', 'patch-product', 'patch-product-metafields'],
    ] as const) {
      const table = 'products'
      const kind = SCENARIOS[plain].writes!.what
      const before = await countStored(server.databaseUrl, table, kind)
      const [without, withValues] = await measureInTurn(session, [
        { server, specs: await spec(plain) },
        { server, specs: await spec(with20) },
      ])
      found.watch(`metafields (${dialect}), ${what} without values`, without!)
      found.watch(`metafields (${dialect}), ${what} with 20 values`, withValues!)
      const after = await countStored(server.databaseUrl, table, kind)
      const answered = without!.responses + withValues!.responses
      if (after - before < answered) {
        found.failures.push(
          `metafields (${dialect}) ${what}: ${answered} answered 200, ${after - before} stored`,
        )
      }
      log(
        `  ${what} ${without!.reqPerS.toFixed(0)} req/s without, ${withValues!.reqPerS.toFixed(0)} with 20 values`,
      )
      figures.push(
        figure(`${what} without metafields`, without!.reqPerS, 'req/s'),
        figure(`${what} with 20 metafield values`, withValues!.reqPerS, 'req/s'),
        figure(`${what}, 20 values / none`, ratio(withValues!.reqPerS, without!.reqPerS), 'x', {
          op: '>=',
          value: 0.8,
        }),
      )
    }
    return figures
  } finally {
    await server.stop()
  }
}
