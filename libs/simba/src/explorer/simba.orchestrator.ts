import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { MutexContendRegistry } from '../mutex/mutex-contend.registry';
import { MutexContendServiceFactory } from '../mutex/mutex-contend-service.factory';
import type { MutexContender } from '../mutex/mutex-contender';
import { ContendServiceStatus, type MutexContendService } from '../mutex/mutex-contend.service';
import { SimbaConnection } from '../mutex/simba-connection';
import { SIMBA_OPTIONS } from '../simba.tokens';
import type { ResolvedSimbaOptions } from '../simba.options';

/**
 * Simba's orchestration, as `@nestjs/schedule`'s orchestrator: given the contenders the
 * {@link SimbaExplorer} found, creates one contend service per decorated mutex and one per
 * contender provider (each in the registry), starts them at bootstrap and stops them (releasing
 * the rows) before shutdown. With `enabled: false` it creates and starts nothing.
 */
@Injectable()
export class SimbaOrchestrator implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(SimbaOrchestrator.name);
  /** Every contend service created here: the decorated mutexes', then the contender providers'. */
  private readonly services: MutexContendService[] = [];

  constructor(
    private readonly factory: MutexContendServiceFactory,
    private readonly registry: MutexContendRegistry,
    @Inject(SIMBA_OPTIONS) private readonly options: ResolvedSimbaOptions,
    private readonly connection: SimbaConnection,
  ) {}

  /**
   * The contenders of the decorated methods (one per mutex) and of the contender providers. The
   * registry answers per mutex: a decorated method's service for a mutex comes first.
   */
  addContenders(decorated: readonly MutexContender[], provided: readonly MutexContender[]): void {
    if (!this.options.enabled) {
      if (decorated.length || provided.length) {
        this.logger.log(
          `SimbaModule is disabled (enabled: false): not contending for ${[...new Set([...decorated, ...provided].map((c) => c.mutex))].join(', ')}`,
        );
      }
      return;
    }
    for (const contender of decorated) {
      const service = this.factory.createMutexContendService(contender);
      this.registry.add(service);
      this.services.push(service);
    }
    for (const contender of provided) {
      const service = this.factory.createMutexContendService(contender);
      if (!this.registry.get(contender.mutex)) this.registry.add(service);
      this.services.push(service);
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.autoStart || !this.options.enabled || !this.services.length) return;
    // Holdfast's connections first (ConnectionBudget): no round before they are open, and an
    // instance the server has no room for starts nothing.
    await this.connection.admitted();
    for (const service of this.services) {
      service.start();
      this.logger.log(`Contending for mutex '${service.mutex}' as ${service.contenderId}`);
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(
      this.services
        .filter((s) => s.status === ContendServiceStatus.RUNNING)
        .map((s) =>
          s
            .stop()
            .catch((error) => this.logger.warn(`Stopping mutex '${s.mutex}': ${(error as Error).message}`)),
        ),
    );
  }
}
