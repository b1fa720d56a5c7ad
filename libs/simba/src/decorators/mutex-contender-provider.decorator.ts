import { SetMetadata } from '@nestjs/common';
import { MUTEX_CONTENDER_PROVIDER } from '../simba.constants';

/**
 * Marks a provider that implements `MutexContender` (Simba's contender beans): SimbaModule finds
 * it by core's discovery rule, contends for its `mutex` from bootstrap on (with `autoStart`) and
 * releases it before shutdown. The provider must be a singleton; metadata only, like `@Cron`.
 */
export const MutexContenderProvider = (): ClassDecorator => SetMetadata(MUTEX_CONTENDER_PROVIDER, true);
