/**
 * How a problem becomes a row's error: on the row and the column of the file it is about,
 * with the contract's code (a schema's problem, a conflict within the file, a refusal of
 * the database).
 */
import { AppError, type FieldProblem } from '../errors.js'
import { findRefusedString } from '../http/json-body.js'
import type {
  ImportError,
  ImportErrorCode,
  MappedProduct,
  MappedVariant,
} from './product-mapping.js'

/**
 * The strings of a product the API would refuse (a NUL, which PostgreSQL cannot store), each
 * on its column, by the API's own check (its JSON body parser's). Found as the product is
 * read, before any of its values is sent to the database (a sku to look up, say).
 */
export function refusedStrings(product: MappedProduct): ImportError[] {
  const errors: ImportError[] = []
  const refused = findRefusedString(product.fields)
  if (refused !== undefined) errors.push(...productErrors(product, [refused]))
  for (const variant of product.variants) {
    const problem = findRefusedString(variant.input)
    if (problem !== undefined) errors.push(...variantErrors(product, variant, [problem]))
  }
  return errors
}

/**
 * Problems of the product's own fields as the rows' errors, each on its column: on its first
 * row, but an image's on the row that gives it (`images.3.alt`: the fourth by position).
 */
export function productErrors(product: MappedProduct, problems: FieldProblem[]): ImportError[] {
  return problems.map((problem) => {
    const path = problem.field.split('.')
    const root = path[0]!
    const row = (root === 'images' && product.imageRows[Number(path[1])]) || product.rows[0]!
    // An image's alt text has a column of its own: `images.3.alt` is on `images.alt`'s.
    const leaf = path.filter((part) => !/^\d+$/.test(part)).join('.')
    return {
      row,
      handle: product.handle,
      field: product.columns[leaf] ?? product.columns[root] ?? problem.field,
      error: 'validation_failed',
      message: problem.message,
    }
  })
}

/** Problems of a variant as its row's errors, each on its column (see variantProblems). */
export function variantErrors(
  product: MappedProduct,
  variant: MappedVariant,
  problems: FieldProblem[],
): ImportError[] {
  return variantProblems(product, variant, problems).map(({ column, message }) => ({
    row: variant.row,
    handle: product.handle,
    field: column,
    error: 'validation_failed',
    message,
  }))
}

/**
 * A variant's problems (by the API's schema), each on the column of the file it is about: an
 * option's name or value on its own column. A name made of the option values (the file gives
 * no Variant Name) is not a column of the file: its problem is reported once, on the first
 * value's column, and not at all when a value has a problem of its own (a value over 255
 * characters makes a name over 255 too: one error says it).
 */
function variantProblems(
  product: MappedProduct,
  variant: MappedVariant,
  problems: FieldProblem[],
): { column: string; message: string }[] {
  const options = variant.input.options ?? {}
  const slots = product.optionColumns.filter((slot) => Object.hasOwn(options, slot.name))
  const valuesColumn = slots[0]?.valueColumn ?? product.variantColumns.options!
  const found: { column: string; message: string }[] = []
  for (const { field, message } of problems) {
    const root = field.split('.')[0]!
    if (root === 'options') {
      // A value's problem is on `options.<name>`; a name's on `options`, as `name "<name>" ...`.
      const slot =
        slots.find((s) => field === `options.${s.name}`) ??
        slots.find((s) => field === 'options' && message.startsWith(`name "${s.name}" `)) ??
        slots.find((s) => field === 'options' && findRefusedString(s.name) !== undefined)
      const column = !slot ? valuesColumn : field === 'options' ? slot.nameColumn : slot.valueColumn
      found.push({ column, message })
    } else if (root === 'name' && variant.nameFromOptions) {
      if (problems.some((problem) => problem.field.split('.')[0] === 'options')) continue
      found.push({
        column: valuesColumn,
        message: `the option values joined by " / " (the variant's name) ${message}`,
      })
    } else {
      const column = product.variantColumns[field] ?? product.variantColumns[root] ?? field
      found.push({ column, message })
    }
  }
  return found
}

/** The errors without repeats (a first variant's bad price is also the product's). */
export function uniqueErrors(errors: ImportError[]): ImportError[] {
  const seen = new Set<string>()
  return errors.filter((error) => {
    const key = `${error.row}\u0000${error.field}\u0000${error.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

export function conflict(
  row: number,
  handle: string,
  field: string | null,
  error: ImportErrorCode,
  message: string,
): ImportError {
  return { row, handle, field, error, message }
}

/** The column a conflict the database refuses is reported on, as the file names it. */
function refusalFields(product: MappedProduct): Partial<Record<string, string>> {
  return {
    duplicate_sku: product.variantColumns.sku!,
    duplicate_options: product.variantColumns.options!,
    duplicate_slug: product.columns.handle!,
  }
}

/** A refusal of a unit of work as the row's error; anything but an AppError is thrown on. */
export function refusal(
  error: unknown,
  row: number,
  product: MappedProduct,
  field: string | null,
): ImportError {
  if (!(error instanceof AppError)) throw error
  const { handle } = product
  const code = error.code
  // The product was archived by someone else between the read and the write.
  if (code === 'invalid_transition') {
    const status = product.columns.status ?? 'Status'
    return { row, handle, field: status, error: 'validation_failed', message: error.message }
  }
  const fieldOf = refusalFields(product)
  if (
    code === 'duplicate_sku' ||
    code === 'duplicate_options' ||
    code === 'duplicate_slug' ||
    code === 'validation_failed'
  ) {
    const detail = error.details?.[0]
    // A value a definition refuses (found by the catalogue's write): on its column.
    const column = detail && (product.columns[detail.field] ?? product.variantColumns[detail.field])
    return {
      row,
      handle,
      field: column ?? detail?.field ?? fieldOf[code] ?? field,
      error: code,
      message: detail ? detail.message : error.message,
    }
  }
  throw error
}

/**
 * A status the product may not go to from its stored one (archived to active), as the row's
 * error: the API answers it 409 invalid_transition, which is not an import code; for a file
 * it is a bad value of the Status column.
 */
export function statusRefused(
  row: number,
  handle: string,
  product: MappedProduct,
  from: string,
  to: string,
): ImportError {
  return {
    row,
    handle,
    field: product.columns.status ?? 'Status',
    error: 'validation_failed',
    message: `cannot set ${to} on a product that is ${from}: an ${from} product goes back to draft first (import it once with Status draft, then ${to})`,
  }
}
