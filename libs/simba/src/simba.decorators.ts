import { Inject } from '@nestjs/common';
import { SIMBA_OPTIONS } from './simba.tokens';

/** Injects the validated, defaulted options of `SimbaModule` (`ResolvedSimbaOptions`). */
export const InjectSimbaOptions = (): ParameterDecorator & PropertyDecorator => Inject(SIMBA_OPTIONS);
