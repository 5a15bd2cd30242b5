import { Type, type Static } from 'typebox'
import { RECORD_RESPONSE_HEADERS } from '../http/conditional.js'
import { Nullable, Timestamp } from '../http/schemas.js'
import {
  MAX_LIST_ITEMS,
  MAX_REGEX_LENGTH,
  METAFIELD_OWNERS,
  METAFIELD_TYPES,
  type MetafieldOwner,
  type MetafieldType,
} from './values/metafield-types.js'

const Owner = Type.Unsafe<MetafieldOwner>({
  type: 'string',
  enum: [...METAFIELD_OWNERS],
  description: 'The records the attribute is on',
})
const MetafieldTypeSchema = Type.Unsafe<MetafieldType>({
  type: 'string',
  enum: [...METAFIELD_TYPES],
  description: "Shopify's metafield type names",
})
const Handle = (description: string) =>
  Type.String({ minLength: 2, maxLength: 64, pattern: '^[a-z0-9_-]+$', description })

const Name = Type.String({ minLength: 1, maxLength: 255 })
const Description = Nullable(Type.String({ maxLength: 5_000 }))

const Validations = Type.Object(
  {
    min: Type.Optional(
      Type.Number({ description: "A number's least value, a text's least length" }),
    ),
    max: Type.Optional(
      Type.Number({ description: "A number's greatest value, a text's greatest length" }),
    ),
    choices: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 5_000 }), {
        minItems: 1,
        maxItems: MAX_LIST_ITEMS,
        description: 'The allowed text values',
      }),
    ),
    regex: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_REGEX_LENGTH,
        description:
          'RE2 syntax; a text value must match it whole. Back-references and lookaround are refused',
      }),
    ),
  },
  { additionalProperties: false, description: 'All optional; each must fit the type' },
)
export const CreateDefinitionBody = Type.Object(
  {
    owner: Owner,
    namespace: Handle('2 to 64 of a-z, 0-9, _ and -'),
    key: Handle('2 to 64 of a-z, 0-9, _ and -'),
    type: MetafieldTypeSchema,
    name: Name,
    description: Type.Optional(Description),
    validations: Type.Optional(Nullable(Validations)),
    filterable: Type.Optional(Nullable(Type.Boolean())),
    searchable: Type.Optional(Nullable(Type.Boolean())),
  },
  {
    examples: [
      {
        owner: 'product',
        namespace: 'custom',
        key: 'material',
        type: 'single_line_text_field',
        name: 'Material',
        validations: { choices: ['cotton', 'wool'] },
        filterable: true,
      },
    ],
  },
)
export type CreateDefinitionInput = Static<typeof CreateDefinitionBody>

/**
 * PATCH body: `name`, `description`, `validations` (whole), `filterable`, `searchable`.
 * `owner`, `namespace`, `key` and `type` are accepted only unchanged (400 otherwise).
 */
export const UpdateDefinitionBody = Type.Object(
  {
    owner: Type.Optional(Owner),
    namespace: Type.Optional(Type.String()),
    key: Type.Optional(Type.String()),
    type: Type.Optional(Type.String()),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    validations: Type.Optional(Nullable(Validations)),
    filterable: Type.Optional(Type.Boolean()),
    searchable: Type.Optional(Type.Boolean()),
  },
  { examples: [{ name: 'Fabric', filterable: true }] },
)
export type UpdateDefinitionInput = Static<typeof UpdateDefinitionBody>

export const TRIMMED_DEFINITION_FIELDS = ['name', 'description'] as const

export const MetafieldDefinition = Type.Object({
  id: Type.String({ format: 'uuid' }),
  owner: Owner,
  namespace: Type.String(),
  key: Type.String(),
  type: MetafieldTypeSchema,
  name: Type.String(),
  description: Nullable(Type.String()),
  validations: Validations,
  filterable: Type.Boolean(),
  searchable: Type.Boolean(),
  version: Type.Integer({ description: '1 at creation, plus 1 for each change; the ETag' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})
export type MetafieldDefinition = Static<typeof MetafieldDefinition>

const EXAMPLE: MetafieldDefinition = {
  id: '019aa9a4-6f2e-7c41-9b0d-3f5e2a8c1d71',
  owner: 'product',
  namespace: 'custom',
  key: 'material',
  type: 'single_line_text_field',
  name: 'Material',
  description: null,
  validations: { choices: ['cotton', 'wool'] },
  filterable: true,
  searchable: false,
  version: 1,
  createdAt: '2026-11-30T10:15:30.123Z',
  updatedAt: '2026-11-30T10:15:30.123Z',
}

export const DefinitionResponse = Type.Object(
  { data: MetafieldDefinition },
  {
    description: 'The definition',
    examples: [{ data: EXAMPLE }],
    headers: RECORD_RESPONSE_HEADERS,
  },
)

export const DefinitionPage = Type.Object(
  {
    data: Type.Array(MetafieldDefinition),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
  },
  {
    description: 'A page of definitions, newest first',
    examples: [{ data: [EXAMPLE], nextCursor: null }],
  },
)

export const ListDefinitionsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
  owner: Type.Optional(Owner),
  namespace: Type.Optional(Handle('Only definitions of this namespace')),
})
export type ListDefinitionsQuery = Static<typeof ListDefinitionsQuery>

export const DefinitionIdParams = Type.Object({
  id: Type.String({ description: 'Metafield definition id (UUID)' }),
})
