import {
  ValidateNested,
  ValidationError,
  registerDecorator,
  validateSync,
  type ValidationOptions,
} from 'class-validator';
import { InvalidOptionsError } from '../errors/holdfast.error';
import { isValidTablePrefix } from '../naming/table-prefix';
import { isDuration } from '../time/duration';

function describe(value: unknown): string {
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function flatten(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((e) => {
    const name = path ? `${path}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map(
      (msg) => `option '${name}' = ${describe(e.value)}: ${msg}`,
    );
    return [...own, ...flatten(e.children ?? [], name)];
  });
}

type OptionsClass = new () => object;
const NESTED = Symbol('holdfast:nested-options');

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Marks an option whose plain-object value is validated as `type(value)` (a class, or a function
 * choosing one from the value, e.g. by its `type` field). Arrays of objects are hydrated element-wise.
 */
export function NestedOptions(
  type: (value: Record<string, unknown>) => OptionsClass | undefined,
): PropertyDecorator {
  return (target, key) => {
    const own: Record<string | symbol, typeof type> = { ...(Reflect.getMetadata(NESTED, target) ?? {}) };
    own[key] = type;
    Reflect.defineMetadata(NESTED, own, target);
    ValidateNested({ each: false })(target, key);
  };
}

/**
 * Builds the validation instance without deep-copying: a DataSource, a class or a function in the
 * options stays the very same reference (class-transformer would recurse into them).
 */
function hydrate(cls: OptionsClass, plain: Record<string, unknown>): object {
  const instance = new cls() as Record<string, unknown>;
  const nested: Record<string, (value: Record<string, unknown>) => OptionsClass | undefined> =
    Reflect.getMetadata(NESTED, cls.prototype) ?? {};
  for (const [key, value] of Object.entries(plain)) {
    const type = nested[key];
    if (type && isPlainObject(value)) {
      const target = type(value);
      instance[key] = target ? hydrate(target, value) : value;
    } else if (type && Array.isArray(value)) {
      instance[key] = value.map((v) => (isPlainObject(v) && type(v) ? hydrate(type(v)!, v) : v));
    } else {
      instance[key] = value;
    }
  }
  return instance;
}

/**
 * Validates module options against a class-validator class. Throws InvalidOptionsError naming
 * every bad option and its value; returns the options as an instance of the class.
 */
export function validateOptions<T extends object>(cls: new () => T, plain: unknown, module: string): T {
  if (plain === null || typeof plain !== 'object') {
    throw new InvalidOptionsError(module, [`options must be an object, got ${describe(plain)}`]);
  }
  const instance = hydrate(cls, plain as Record<string, unknown>) as T;
  const errors = validateSync(instance, { forbidUnknownValues: false, whitelist: false });
  if (errors.length) throw new InvalidOptionsError(module, flatten(errors));
  return instance;
}

/** class-validator: a Duration (ms number ≥ 0 or a string like '10s'). */
export function IsDurationOption(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDuration',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: "must be milliseconds (a number ≥ 0) or a duration string like '10s' or 'PT10S'",
        ...options,
      },
      validator: { validate: (value: unknown) => isDuration(value) },
    });
}

/** class-validator: a table prefix matching SPEC section 2. */
export function IsTablePrefix(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTablePrefix',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must match ([A-Za-z0-9_]+\\.)*[A-Za-z0-9_]*', ...options },
      validator: { validate: (value: unknown) => isValidTablePrefix(value) },
    });
}

/** class-validator: a TypeORM DataSource instance or the name of one. */
export function IsDataSourceOption(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDataSourceOption',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'must be a TypeORM DataSource or the name of one', ...options },
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' ||
          (typeof value === 'object' && value !== null && 'createQueryRunner' in value),
      },
    });
}
