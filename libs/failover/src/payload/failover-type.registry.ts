import { Injectable } from '@nestjs/common';
import { FailoverConfigurationError } from '../errors';
import { decoratedPayloadClasses, failoverPayloadName } from '../decorators/failover-payload.decorator';
import { BUILTIN_PAYLOAD_CLASSES, Class, DeclaredPayloadType } from './payload-type';

const BUILTIN_NAMES: ReadonlySet<string> = new Set(BUILTIN_PAYLOAD_CLASSES);

/** A payload class for `FailoverModule.forRoot({ types })`: the class, or the class with a qualified name. */
export type PayloadClassDeclaration = Class | { name: string; type: Class };

/**
 * The payload classes Holdfast may rebuild, by the name PAYLOAD_CLASS holds: the `type` of
 * every discovered @Failover, the module's `types`, every @FailoverPayload() class, plus
 * `allowedPayloadClasses`. This is the deserialization allowlist, and what a value's class is
 * checked against before it is stored. A name means one class: two classes registered under
 * one name stop the bootstrap (give one a qualified name).
 */
@Injectable()
export class FailoverTypeRegistry {
  private readonly classes = new Map<string, Class>();
  private readonly names = new Map<Class, string>();
  private readonly allowedNames = new Set<string>();
  /** `allowedPayloadClasses` entries as package prefixes (`com.acme.` for `com.acme`), as in the seed. */
  private allowedPackages: string[] = [];
  private strict = false;
  private decoratedSeen = 0;

  configure(allowedPayloadClasses: readonly string[] = [], strictAllowlist = false): void {
    allowedPayloadClasses.forEach((name) => this.allowedNames.add(name));
    // The seed takes package prefixes too: a Java service's config lists `com.acme.referential`.
    this.allowedPackages = allowedPayloadClasses.map((name) => `${name}.`);
    this.strict = strictAllowlist;
  }

  /** A declared type (`Class` or `[Class]`), or a `{ name, type }` declaration. */
  register(type: DeclaredPayloadType | PayloadClassDeclaration, where = 'a @Failover type'): void {
    if (!Array.isArray(type) && typeof type === 'object') {
      this.add(type.type, type.name, where);
      return;
    }
    const cls = Array.isArray(type) ? type[0] : type;
    this.add(cls, undefined, where);
  }

  private add(cls: Class, explicit: string | undefined, where: string): void {
    const name = explicit ?? this.names.get(cls) ?? failoverPayloadName(cls) ?? cls.name;
    const existing = this.classes.get(name);
    if (existing && existing !== cls) {
      throw new FailoverConfigurationError(
        `Two different payload classes are registered as '${name}' (the second from ${where}): a stored ` +
          `entry could be rebuilt as the wrong one. Give one a qualified name: @FailoverPayload('billing.${cls.name}') ` +
          `or types: [{ name: 'billing.${cls.name}', type: ${cls.name} }].`,
      );
    }
    const previous = this.names.get(cls);
    if (previous !== undefined && previous !== name) {
      throw new FailoverConfigurationError(
        `Payload class ${cls.name} is registered under two names, '${previous}' and '${name}' (from ${where}).`,
      );
    }
    this.classes.set(name, cls);
    this.names.set(cls, name);
    this.allowedNames.add(name);
    this.allowedNames.add(`${name}[]`);
  }

  /** Picks up @FailoverPayload() classes decorated since the last call (classes load lazily). */
  private syncDecorated(): void {
    const all = decoratedPayloadClasses();
    for (; this.decoratedSeen < all.length; this.decoratedSeen++)
      this.add(all[this.decoratedSeen], undefined, '@FailoverPayload()');
  }

  /** The registered name of a class, or undefined when the class is not known. */
  nameOf(cls: Class): string | undefined {
    let name = this.names.get(cls);
    if (name === undefined && this.decoratedSeen < decoratedPayloadClasses().length) {
      this.syncDecorated();
      name = this.names.get(cls);
    }
    return name;
  }

  /** PAYLOAD_CLASS of a declared type: its registered name (`Name[]` for arrays). */
  typeName(type: DeclaredPayloadType): string {
    const cls = Array.isArray(type) ? type[0] : type;
    let name = this.nameOf(cls);
    if (name === undefined) {
      this.register(type);
      name = this.names.get(cls)!;
    }
    return Array.isArray(type) ? `${name}[]` : name;
  }

  /** An allowed class, an array of one (`Name[]`), or (unless strict) a plain JSON shape. */
  isAllowed(payloadClass: string): boolean {
    // The common case first: a plain JSON shape (checked on every recovery).
    if (!this.strict && BUILTIN_NAMES.has(payloadClass)) return true;
    if (!this.allowedNames.has(payloadClass) && this.decoratedSeen < decoratedPayloadClasses().length)
      this.syncDecorated();
    const element = payloadClass.endsWith('[]') ? payloadClass.slice(0, -2) : payloadClass;
    if (this.allowedNames.has(payloadClass) || this.allowedNames.has(element)) return true;
    return this.allowedPackages.some((prefix) => element.startsWith(prefix));
  }

  /** The class registered under `name` (without a trailing `[]`). */
  classFor(name: string): Class | undefined {
    const element = name.endsWith('[]') ? name.slice(0, -2) : name;
    if (!this.classes.has(element) && this.decoratedSeen < decoratedPayloadClasses().length)
      this.syncDecorated();
    return this.classes.get(element);
  }
}
