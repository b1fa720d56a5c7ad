import { Inject } from '@nestjs/common';
import { SIMBA_RESOLVED_OPTIONS } from './simba.constants';

/** Injects the validated, defaulted options of `SimbaModule` (`ResolvedSimbaOptions`). */
export const InjectSimbaOptions = (): ParameterDecorator & PropertyDecorator =>
  Inject(SIMBA_RESOLVED_OPTIONS);
