import { Inject } from '@nestjs/common';
import { LOCKER_OPTIONS } from './locker.tokens';

/** Injects the validated, defaulted options of `LockerModule` (`ResolvedLockerOptions`). */
export const InjectLockerOptions = (): ParameterDecorator & PropertyDecorator => Inject(LOCKER_OPTIONS);
