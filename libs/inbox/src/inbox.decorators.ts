import { Inject } from '@nestjs/common';
import { INBOX_OPTIONS } from './inbox.constants';

/** Injects the validated, defaulted options of `InboxModule` (`ResolvedInboxOptions`). */
export const InjectInboxOptions = (): ParameterDecorator & PropertyDecorator => Inject(INBOX_OPTIONS);
