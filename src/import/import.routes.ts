import { Readable } from 'node:stream'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify'
import { Type } from 'typebox'
import { principalOf } from '../auth/auth.hook.js'
import type { Database } from '../db/database.js'
import { isUuid } from '../db/values.js'
import { AppError } from '../errors.js'
import { IdempotencyHeaders, PREFIX } from '../http/route-kit.js'
import { ErrorBody, Nullable, Timestamp, withErrors } from '../http/schemas.js'
import { createValidatorCompiler } from '../http/validation.js'
import { exportCatalog, startedStream } from './export.service.js'
import { requestFingerprint } from '../idempotency/idempotency.http.js'
import { createIdempotentWriter } from '../idempotency/idempotency.service.js'
import { DUPLICATE_SKUS, type DuplicateSkus } from './import-plan.js'
import { fileTooLarge, type ImportJobs, type ImportRecord, type KeepImport } from './import-jobs.js'

const ImportErrorSchema = Type.Object({
  row: Type.Integer({ description: 'The record as a spreadsheet numbers it: the header is row 1' }),
  handle: Type.String(),
  field: Nullable(Type.String({ description: 'The column, as the file names it' })),
  error: Type.String({
    description:
      'validation_failed, duplicate_sku, duplicate_options, duplicate_slug or invalid_csv',
  }),
  message: Type.String(),
})

const ImportWarningSchema = Type.Object({
  row: Type.Integer({ description: 'The record as a spreadsheet numbers it: the header is row 1' }),
  handle: Type.String(),
  field: Type.Union([Type.Literal('sku'), Type.Literal('slug')], {
    description: 'sku: imported without its sku; slug: the handle made into a slug',
  }),
  message: Type.String({ description: 'What was imported otherwise, and why' }),
})

export const ImportRecordSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: Type.Unsafe<'running' | 'succeeded' | 'failed'>({
    type: 'string',
    enum: ['running', 'succeeded', 'failed'],
    description:
      'succeeded: the file was read to its end (rows may have failed: see errors); failed: the ' +
      'file was refused, or the import was cut short (see failureReason)',
  }),
  rowsProcessed: Type.Integer(),
  productsCreated: Type.Integer(),
  productsUpdated: Type.Integer(),
  variantsCreated: Type.Integer(),
  variantsUpdated: Type.Integer(),
  rowsFailed: Type.Integer(),
  columnsNotStored: Type.Array(Type.String()),
  errors: Type.Array(ImportErrorSchema, { description: 'The first 1,000' }),
  warnings: Type.Array(ImportWarningSchema, {
    description:
      'The first 1,000 rows imported otherwise than the file says: with duplicate_skus=clear, ' +
      'a variant imported without its sku, which another product keeps',
  }),
  skusCleared: Type.Integer({
    description: 'Variants imported without their sku (duplicate_skus=clear); 0 without it',
  }),
  productsFailed: Type.Integer({
    description: 'Products skipped whole (rowsFailed counts all their rows) for an error of a row',
  }),
  productsSkippedForDuplicateSkus: Type.Integer({
    description:
      'Of productsFailed, those with a duplicate_sku error (a sku another product keeps): ' +
      'duplicate_skus=clear imports them without those skus',
  }),
  rowsSkippedForDuplicateSkus: Type.Integer({
    description: 'The rows of productsSkippedForDuplicateSkus',
  }),
  errorCount: Type.Integer({ description: 'Every error found; errors lists the first 1,000' }),
  source: Type.Unsafe<'http' | 'cli'>({
    type: 'string',
    enum: ['http', 'cli'],
    description: 'http: POST /imports; cli: catalog import (recorded too; a --dry-run is not)',
  }),
  duplicateSkus: Type.Unsafe<DuplicateSkus>({
    type: 'string',
    enum: [...DUPLICATE_SKUS],
    description: 'The duplicate_skus (CLI: --duplicate-skus) choice the import ran with',
  }),
  hints: Type.Array(Type.String(), {
    description:
      'What to do about the summary, in words: products skipped for shared skus and the ' +
      'choice that imports them, errors past the 1,000 kept; empty when there is nothing to say',
  }),
  failureReason: Nullable(Type.String()),
  createdAt: Timestamp,
  finishedAt: Nullable(Timestamp),
})

const IMPORT_EXAMPLE = {
  id: '019aa9a4-6f2e-7c41-9b0d-3f5e2a8c1d71',
  status: 'succeeded',
  rowsProcessed: 17,
  productsCreated: 2,
  productsUpdated: 0,
  variantsCreated: 15,
  variantsUpdated: 0,
  rowsFailed: 1,
  columnsNotStored: ['Variant Inventory Qty', 'SEO Title'],
  skusCleared: 0,
  productsFailed: 1,
  productsSkippedForDuplicateSkus: 0,
  rowsSkippedForDuplicateSkus: 0,
  errorCount: 1,
  source: 'http',
  duplicateSkus: 'fail',
  hints: [],
  errors: [
    {
      row: 17,
      handle: 'example-hat',
      field: 'Variant Price',
      error: 'validation_failed',
      message: 'must be >= 0',
    },
  ],
  warnings: [],
  failureReason: null,
  createdAt: '2026-11-25T01:15:30.123Z',
  finishedAt: '2026-11-25T01:15:31.456Z',
}

const ImportResponse = Type.Object(
  { data: ImportRecordSchema },
  { examples: [{ data: IMPORT_EXAMPLE }] },
)

const { errors: _errors, warnings: _warnings, ...IMPORT_LIST_EXAMPLE } = IMPORT_EXAMPLE

const ImportPage = Type.Object(
  {
    data: Type.Array(Type.Omit(ImportRecordSchema, ['errors', 'warnings'])),
    nextCursor: Nullable(
      Type.String({ description: 'Pass as cursor for the next page; null on the last' }),
    ),
  },
  {
    description:
      "A page of the store's imports, newest first, each without its errors and warnings",
    examples: [{ data: [IMPORT_LIST_EXAMPLE], nextCursor: null }],
  },
)

const ListImportsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ description: 'nextCursor of the previous page' })),
})

const CreateImportQuery = Type.Object({
  create_definitions: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        "First create the metafield definitions the store lacks for the file's " +
        '"Label (product|variant.metafields.NS.KEY)" columns (as catalog import ' +
        '--create-definitions): a list of text when a value holds "; ", else text',
    }),
  ),
  duplicate_skus: Type.Optional(
    Type.Unsafe<DuplicateSkus>({
      type: 'string',
      enum: [...DUPLICATE_SKUS],
      default: 'fail',
      description:
        'A variant whose sku another product (or an earlier row) keeps: fail refuses its ' +
        'product (duplicate_sku); clear imports the variant without the sku and reports the ' +
        'row in warnings',
    }),
  ),
})

const CSV_BODY = {
  content: {
    'text/csv': {
      schema: {
        type: 'string',
        description:
          'A Shopify product CSV (classic or 2025 column names), up to IMPORT_MAX_BYTES (64 MiB unless configured)',
      },
    },
  },
}

const CSV_ANSWER = {
  description: "The store's catalogue as a Shopify product CSV, streamed",
  headers: {
    'Content-Disposition': {
      type: 'string',
      description: 'attachment; filename="products.csv": a browser saves the file',
    },
  },
  content: { 'text/csv': { schema: { type: 'string' } } },
}

/** The body of POST /imports is a stream, which no schema checks; the rest as usual. */
const bodyAsStream = (): FastifySchemaCompiler<unknown> => {
  const usual = createValidatorCompiler()
  return (route) => (route.httpPart === 'body' ? () => true : usual(route))
}

function unsupportedType(): AppError {
  return new AppError('unsupported_media_type', 'The request body must be sent as text/csv.')
}

/**
 * POST /imports, GET /imports, GET /imports/:id and GET /exports/products.csv. Registered in
 * a plugin of their own: its one body parser hands the text/csv body on as a stream (kept in
 * a file by the import jobs, not in memory), and any other type is 415.
 */
export function registerImportRoutes(
  app: FastifyInstance,
  database: Database,
  jobs: ImportJobs,
  options: { idempotencyKeyTtlSeconds: number },
): void {
  const idempotent = createIdempotentWriter(database, {
    ttlSeconds: options.idempotencyKeyTtlSeconds,
  })
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('text/csv', (request, payload, done) => {
      // A body that says it is over the limit is refused before it is read (as Fastify does
      // with JSON bodies over bodyLimit); one sent without a length is counted as it comes.
      if (Number(request.headers['content-length']) > jobs.maxBytes) {
        return done(fileTooLarge(jobs.maxBytes))
      }
      done(null, payload)
    })
    scope.addContentTypeParser('*', (_request, _payload, done) => done(unsupportedType()))
    const routes = scope.withTypeProvider<TypeBoxTypeProvider>()

    routes.post(
      `${PREFIX}/imports`,
      {
        config: { scope: 'write' },
        validatorCompiler: bodyAsStream(),
        schema: {
          operationId: 'createImport',
          tags: ['imports'],
          summary: 'Import a Shopify product CSV in the background',
          description:
            'Answers 202 once the file is received; the import runs in the background (GET ' +
            '/imports/{id} for its progress). Products are matched by handle, variants by sku ' +
            'then options; nothing is deleted; running the same file again is safe.',
          headers: IdempotencyHeaders,
          querystring: CreateImportQuery,
          body: CSV_BODY,
          response: withErrors({
            202: ImportResponse,
            400: ErrorBody,
            409: ErrorBody,
            413: ErrorBody,
            415: ErrorBody,
            422: ErrorBody,
          }),
        } as never,
      },
      async (request, reply) => {
        if (!(request.body instanceof Readable)) throw unsupportedType()
        const storeId = principalOf(request).storeId
        const key = request.headers['idempotency-key']
        const { duplicate_skus: duplicateSkus, create_definitions: createDefinitions } =
          request.query as { duplicate_skus?: DuplicateSkus; create_definitions?: boolean }
        let replayed = false
        // With an Idempotency-Key the file (by its digest) is the body a retry must repeat,
        // and the import's record is written in the key's transaction, as any write's.
        const keep: KeepImport | undefined =
          typeof key === 'string'
            ? async (insert, fileDigest) => {
                const call = {
                  storeId,
                  key,
                  fingerprint: requestFingerprint(
                    'POST',
                    request.url.split('?', 1)[0]!,
                    // A retry asks for the same choices too (the defaults' as before).
                    `${fileDigest}${duplicateSkus === 'clear' ? ' duplicate_skus=clear' : ''}${
                      createDefinitions ? ' create_definitions' : ''
                    }`,
                  ),
                }
                const answer = await idempotent.run(call, insert)
                replayed = answer.replayed
                return (answer.body as { data: ImportRecord }).data
              }
            : undefined
        const record = await jobs.submit(storeId, request.body, keep, {
          duplicateSkus,
          createDefinitions,
        })
        if (replayed) reply.header('idempotent-replayed', 'true')
        reply.code(202)
        return { data: record }
      },
    )

    routes.get(
      `${PREFIX}/imports`,
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'listImports',
          tags: ['imports'],
          summary: "The store's imports, newest first",
          description:
            'Each as GET /imports/{id} answers it, without `errors` (up to 1,000 each): ' +
            'GET /imports/{id} has them.',
          querystring: ListImportsQuery,
          response: withErrors({ 200: ImportPage, 400: ErrorBody }),
        },
      },
      async (request) => jobs.list(principalOf(request).storeId, request.query),
    )

    routes.get(
      `${PREFIX}/imports/:id`,
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'getImport',
          tags: ['imports'],
          summary: "An import's status, counts and errors",
          params: Type.Object({ id: Type.String({ description: 'Import id (UUID)' }) }),
          response: withErrors({ 200: ImportResponse, 404: ErrorBody }),
        },
      },
      async (request) => {
        const { id } = request.params
        const record = isUuid(id)
          ? await jobs.get(principalOf(request).storeId, id.toLowerCase())
          : undefined
        if (!record) throw new AppError('not_found', 'No import with this id exists in your store.')
        return { data: record }
      },
    )

    routes.get(
      `${PREFIX}/exports/products.csv`,
      {
        config: { scope: 'read' },
        schema: {
          operationId: 'exportProducts',
          tags: ['imports'],
          summary: "The store's catalogue as a Shopify product CSV",
          description:
            "The classic columns, then the export's own (Product Price, Product Compare At " +
            'Price, Product SKU, Product Barcode, Product Tax Rate, Variant Name); POST ' +
            '/imports reads it back.',
          response: withErrors({ 200: CSV_ANSWER }),
        } as never,
      },
      async (request, reply) => {
        reply.header('content-type', 'text/csv; charset=utf-8')
        reply.header('content-disposition', 'attachment; filename="products.csv"')
        // The first piece (the header, after the count of option names) is read before
        // the answer starts, so a database that is down is a 503, not a cut answer.
        return reply.send(
          await startedStream(exportCatalog(database, principalOf(request).storeId)),
        )
      },
    )
  })
}
