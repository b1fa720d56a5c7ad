import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { INBOX_HANDLER_METADATA } from '../inbox.constants';
import type { InboxHandlerOptions } from './inbox-handler.decorator';
import { InboxHandlerRegistry } from './inbox-handler.registry';

/** Finds @InboxHandler methods on every provider and controller (like @nestjs/schedule's explorer). */
@Injectable()
export class InboxHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger(InboxHandlerExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly registry: InboxHandlerRegistry,
  ) {}

  onModuleInit(): void {
    const wrappers = [...this.discovery.getProviders(), ...this.discovery.getControllers()];
    for (const wrapper of wrappers) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance);
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = instance[method];
        const options = this.reflector.get<InboxHandlerOptions | undefined>(INBOX_HANDLER_METADATA, fn);
        if (!options) continue;
        const { concurrency, ...type } = options;
        const name = `${instance.constructor?.name ?? 'Provider'}.${method}`;
        this.registry.register({
          type,
          name,
          ...(concurrency !== undefined ? { concurrency } : {}),
          handle: (message, context) => fn.call(instance, message, context),
        });
        this.logger.log(
          `Inbox handler ${name} for ${[type.namespace, type.name, type.revision].filter(Boolean).join(':')}`,
        );
      }
    }
  }
}
