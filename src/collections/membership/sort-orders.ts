/** The orders a collection's products can be kept in: by hand, or by one of the product sorts. */
export const SORT_ORDERS = [
  'manual',
  'newest',
  'oldest',
  'name',
  '-name',
  'price',
  '-price',
] as const
export type SortOrder = (typeof SORT_ORDERS)[number]
