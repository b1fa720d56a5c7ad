import { Injectable } from '@nestjs/common';
import { BUILTIN_PAYLOAD_CLASSES, Class, PayloadType, payloadTypeName } from './payload-type';

/**
 * The payload classes Holdfast may rebuild: the `type` of every discovered @Failover plus
 * `allowedPayloadClasses`. This is the deserialization allowlist.
 */
@Injectable()
export class FailoverTypeRegistry {
  private readonly classes = new Map<string, Class>();
  private readonly allowedNames = new Set<string>();
  private strict = false;

  configure(allowedPayloadClasses: readonly string[] = [], strictAllowlist = false): void {
    allowedPayloadClasses.forEach((name) => this.allowedNames.add(name));
    this.strict = strictAllowlist;
  }

  register(type: PayloadType): void {
    const cls = Array.isArray(type) ? type[0] : type;
    this.classes.set(cls.name, cls);
    this.allowedNames.add(cls.name);
    this.allowedNames.add(payloadTypeName(type));
  }

  /** An allowed class, an array of one (`Name[]`), or (unless strict) a plain JSON shape. */
  isAllowed(payloadClass: string): boolean {
    const element = payloadClass.endsWith('[]') ? payloadClass.slice(0, -2) : payloadClass;
    return (
      this.allowedNames.has(payloadClass) ||
      this.allowedNames.has(element) ||
      (!this.strict && BUILTIN_PAYLOAD_CLASSES.includes(payloadClass))
    );
  }

  /** The class registered under `name` (without a trailing `[]`). */
  classFor(name: string): Class | undefined {
    return this.classes.get(name.endsWith('[]') ? name.slice(0, -2) : name);
  }
}
