import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely'

/**
 * PostgreSQL, with an introspector that sees only the connection's current schema.
 *
 * Kysely's own lists the tables of every schema in the database, calling functions on each
 * (has_schema_privilege, pg_get_serial_sequence) that fail when another client drops a
 * schema meanwhile; its Migrator runs that on every start. The service lives in one schema
 * (search_path), so that is all it needs to look at.
 */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db)
  }
}

interface ColumnRow {
  schema: string
  table: string
  table_type: string
  column: string
  data_type: string
  data_type_schema: string
  is_nullable: 'YES' | 'NO'
  column_default: string | null
}

class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<any>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select current_schema() as name`.execute(this.db)
    return rows
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.table_schema as schema, c.table_name as table, t.table_type,
             c.column_name as column, c.udt_name as data_type,
             c.udt_schema as data_type_schema, c.is_nullable, c.column_default
      from information_schema.columns c
      join information_schema.tables t
        on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema()
      order by c.table_name, c.ordinal_position`.execute(this.db)
    const internal = [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]
    const tables = new Map<string, TableMetadata>()
    for (const row of rows) {
      if (!options.withInternalKyselyTables && internal.includes(row.table)) continue
      let table = tables.get(row.table)
      if (!table) {
        table = {
          name: row.table,
          schema: row.schema,
          isView: row.table_type === 'VIEW',
          columns: [],
        }
        tables.set(row.table, table)
      }
      table.columns.push({
        name: row.column,
        dataType: row.data_type,
        dataTypeSchema: row.data_type_schema,
        isNullable: row.is_nullable === 'YES',
        hasDefaultValue: row.column_default !== null,
        isAutoIncrementing: row.column_default?.startsWith('nextval(') ?? false,
      })
    }
    return [...tables.values()]
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) }
  }
}
