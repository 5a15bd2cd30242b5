import { Type } from 'typebox'

/** Definitions a store may have per owner (products, variants): also bounds a request's values. */
export const MAX_DEFINITIONS_PER_OWNER = 200

/** The `metafields` of a record: every value set, by `<namespace>.<key>`. */
export const Metafields = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
  description: 'Custom attribute values by "<namespace>.<key>"; {} when none',
})

/** The `metafields` of a request: a merge patch on PATCH (null removes a key). */
export const MetafieldsInput = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  maxProperties: 2 * MAX_DEFINITIONS_PER_OWNER,
  additionalProperties: true,
  description:
    'Values by "<namespace>.<key>" of a definition of the record\'s owner; on PATCH a key ' +
    'with null removes its value, keys left out are unchanged',
})
