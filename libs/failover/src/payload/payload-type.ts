/** A payload class, `[Class]` for an array of them. */
// Any constructor's parameters, as Nest's own Type<T>: `unknown[]` would refuse every class that declares some.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Class<T = unknown> = new (...args: any[]) => T;
/** What `@Failover({ type })` declares: a payload class, or `[Class]` for an array of them. */
export type DeclaredPayloadType = Class | [Class];

/**
 * A failover's values stored under a Java class name (`@Failover({ javaClass })`): PAYLOAD_CLASS
 * holds `javaClass`, which a Java reader's `Class.forName` loads, and Holdfast rebuilds them as
 * the declared `type` (plain JSON without one).
 */
export interface JavaNamedPayloadType {
  readonly javaClass: string;
  readonly type?: DeclaredPayloadType;
}

/** How a store is told what a failover's values are: the declared type, Java-named or not. */
export type PayloadType = DeclaredPayloadType | JavaNamedPayloadType;

export function isJavaNamed(type: PayloadType | undefined): type is JavaNamedPayloadType {
  return typeof type === 'object' && type !== null && !Array.isArray(type);
}

/** The declared type inside a PayloadType. */
export function declaredType(type: PayloadType | undefined): DeclaredPayloadType | undefined {
  return isJavaNamed(type) ? type.type : type;
}

/**
 * A Java binary class name `Class.forName` takes: `com.acme.Country`, a nested
 * `com.acme.Rates$Quote`, or an array class such as `[Lcom.acme.Country;`.
 */
export const JAVA_CLASS_NAME =
  /^(?:\[+(?:L[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*;|[ZBCDFIJS])|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$/;

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
