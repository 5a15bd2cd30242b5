/** The sorts of the product list (the contract's order); `relevance` only with `q`. */
export const SORTS = [
  'newest',
  'oldest',
  'updated',
  'name',
  '-name',
  'price',
  '-price',
  'relevance',
] as const
export type Sort = (typeof SORTS)[number]
