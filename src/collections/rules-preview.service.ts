import type { Database } from '../db/database.js'
import type { PreviewRulesInput, RulesPreview } from './collection.schemas.js'
import { countProductsWhere } from './membership/rules-change.repository.js'
import { ruleAttributes } from './membership/metafield-rules.js'
import { checkRules, rulesSql } from './membership/rules.js'

/**
 * How many products a smart collection with these rules would hold, before it is saved
 * (decision 0053): the rules checked as a create and a PATCH check them, and counted with the
 * SQL that a rules change writes the members with. A read: no lock, no row, no event.
 */
export async function previewRules(
  database: Database,
  storeId: string,
  input: PreviewRulesInput,
): Promise<RulesPreview> {
  const db = database.kysely
  const rules = checkRules(input.rules, await ruleAttributes(db, storeId, input.rules))
  const disjunctive = input.disjunctive ?? false
  const productsCount = await countProductsWhere(db, storeId, rulesSql(db, rules, disjunctive))
  return { rules, disjunctive, productsCount }
}
