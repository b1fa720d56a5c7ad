/** A payload class, `[Class]` for an array of them. */
export type Class<T = unknown> = new (...args: any[]) => T;
export type PayloadType = Class | [Class];

/** JSON shapes that need no class to rebuild. Allowed unless `strictAllowlist` is on. */
export const BUILTIN_PAYLOAD_CLASSES: readonly string[] = [
  'Object',
  'Array',
  'String',
  'Number',
  'Boolean',
  'Date',
];

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
