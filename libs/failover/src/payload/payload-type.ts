/** A payload class, `[Class]` for an array of them. */
export type Class<T = unknown> = new (...args: any[]) => T;
export type PayloadType = Class | [Class];

/** The registered name of a payload type: the class name, `Name[]` for arrays. */
export function payloadTypeName(type: PayloadType): string {
  return Array.isArray(type) ? `${type[0].name}[]` : type.name;
}

/** JSON shapes that need no class to rebuild. Allowed unless `strictAllowlist` is on. */
export const BUILTIN_PAYLOAD_CLASSES: readonly string[] = ['Object', 'Array', 'String', 'Number', 'Boolean'];

/** The PAYLOAD_CLASS of a value with no declared type. */
export function builtinPayloadClass(value: unknown): string {
  if (Array.isArray(value)) return 'Array';
  switch (typeof value) {
    case 'string':
      return 'String';
    case 'number':
      return 'Number';
    case 'boolean':
      return 'Boolean';
  }
  const ctor = (value as object)?.constructor;
  return ctor && ctor !== Object ? ctor.name : 'Object';
}
