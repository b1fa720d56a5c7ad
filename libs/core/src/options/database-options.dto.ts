import { IsIn, ValidateIf } from 'class-validator';
import type { DataSourceOption } from '../database/data-source';
import { DIALECTS, type Dialect } from '../dialect/dialect';
import { SCHEMA_MODES, type SchemaMode } from '../schema/schema-manager';
import { IsDataSourceOption, IsTablePrefix } from './validate-options';

/**
 * The options every Holdfast module takes to reach its tables, with their validation. Each lib's
 * options DTO extends it (and may narrow a field with a default), so all four check them alike.
 */
/** Validated when given; `null` is an error rather than "absent". */
const IfGiven = () => ValidateIf((_, value) => value !== undefined);

export class DatabaseOptionsDto {
  /** The TypeORM DataSource, or the name of a @nestjs/typeorm one (default: the default one). */
  @IfGiven() @IsDataSourceOption() dataSource?: DataSourceOption;
  @IfGiven() @IsTablePrefix() tablePrefix?: string;
  @IfGiven() @IsIn(DIALECTS as unknown as string[]) dialect?: Dialect;
  /** What to do with the tables at startup: create them, check them, or neither. */
  @IfGiven() @IsIn(SCHEMA_MODES as unknown as string[]) schema?: SchemaMode;
}
