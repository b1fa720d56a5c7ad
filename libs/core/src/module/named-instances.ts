import type { DynamicModule, Provider, Type } from '@nestjs/common';

/** The name of a module registered without `forRoot({ name })`. */
export const DEFAULT_INSTANCE_NAME = 'default';

/** A token of the default instance, and how a named instance spells the same one. */
export interface NamedAlias {
  token: symbol | string;
  named: (name: string) => string;
}

/** What `NamedInstances` needs to know of its lib. */
export interface NamedInstancesSpec {
  /** The lib in token names: `holdfast:<lib>:<name>:<Class>`. */
  lib: string;
  /** The module's validated options (the default instance's token). */
  optionsToken: symbol | string;
  /** Where the module provides its own instance's name. */
  nameToken: symbol | string;
  /** The lib's typed error for a name that is not a non-empty string without surrounding spaces. */
  invalidName: (message: string) => Error;
}

/** forRoot's extras every module with named instances takes. */
export interface NamedModuleExtras {
  isGlobal?: boolean;
  name?: string;
}

/**
 * Named instances of one Holdfast module (two inboxes, two failover stores in one app), the way
 * `@nestjs/typeorm` names its DataSources: the default instance's services are injected by their
 * classes (`app.get(MessageAcceptor)`), a named instance's by `holdfast:<lib>:<name>:<Class>`
 * tokens, aliases of the classes inside its own module.
 */
export class NamedInstances {
  constructor(private readonly spec: NamedInstancesSpec) {}

  isDefault(name: string | undefined): boolean {
    return name === undefined || name === DEFAULT_INSTANCE_NAME;
  }

  /**
   * The one naming scheme of an instance's strings (tokens, scheduler job names):
   * `holdfast:<lib>:<what>` for the default instance, `holdfast:<lib>:<name>:<what>` for a named
   * one, so two instances never collide.
   */
  key(what: string, name?: string): string {
    return this.isDefault(name)
      ? `holdfast:${this.spec.lib}:${what}`
      : `holdfast:${this.spec.lib}:${name}:${what}`;
  }

  /** The class itself for the default instance, `holdfast:<lib>:<name>:<Class>` for a named one. */
  token<T>(service: Type<T>, name?: string): Type<T> | string {
    return this.isDefault(name) ? service : this.key(service.name, name);
  }

  /** The token of one instance's validated options. */
  optionsToken(name?: string): symbol | string {
    return this.isDefault(name) ? this.spec.optionsToken : this.key('options', name);
  }

  /**
   * `setExtras`' callback for `ConfigurableModuleBuilder`: global unless `isGlobal: false`, the
   * instance's name provided under `nameToken`, and its exports: the default instance exports
   * `services`, its options and `aliases` as they are; a named one exports them under its own
   * tokens only.
   */
  extras(
    services: readonly Type<unknown>[],
    aliases: readonly NamedAlias[] = [],
  ): (definition: DynamicModule, extras: NamedModuleExtras) => DynamicModule {
    return (definition, extras) => {
      const name = this.validName(extras.name);
      const own: Provider = { provide: this.spec.nameToken, useValue: name };
      let providers: Provider[] = [own];
      let exports: Array<Type<unknown> | symbol | string> = [
        this.spec.optionsToken,
        ...aliases.map((alias) => alias.token),
        ...services,
      ];
      if (!this.isDefault(name)) {
        const named: Provider[] = [
          { provide: this.optionsToken(name), useExisting: this.spec.optionsToken },
          ...aliases.map((alias) => ({ provide: alias.named(name), useExisting: alias.token })),
          ...services.map((service) => ({ provide: this.token(service, name), useExisting: service })),
        ];
        providers = [own, ...named];
        exports = named.map((provider) => (provider as { provide: string }).provide);
      }
      return {
        ...definition,
        global: extras.isGlobal,
        providers: [...(definition.providers ?? []), ...providers],
        exports: [...(definition.exports ?? []), ...exports],
      };
    };
  }

  private validName(name: unknown): string {
    if (name === undefined) return DEFAULT_INSTANCE_NAME;
    if (typeof name !== 'string' || name.trim() === '' || name !== name.trim()) {
      throw this.spec.invalidName(
        `forRoot({ name }): the name must be a non-empty string without surrounding spaces, got ${JSON.stringify(name)}`,
      );
    }
    return name;
  }
}
