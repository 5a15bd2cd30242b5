// The same statements on both databases.
export { down, up } from '../2026-11-30T08-metafield-values-by-product.js'
