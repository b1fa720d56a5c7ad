import { Inject } from '@nestjs/common';
import { MessageAcceptor } from '../acceptor/message-acceptor.service';
import { getInboxOptionsToken, getInboxToken } from '../inbox.tokens';
import { MessageManagement } from '../management/message-management.service';

type InjectDecorator = ParameterDecorator & PropertyDecorator;

/**
 * Injects the validated, defaulted options of `InboxModule` (`ResolvedInboxOptions`); with a
 * name, those of the inbox registered with that `name`.
 */
export const InjectInboxOptions = (name?: string): InjectDecorator => Inject(getInboxOptionsToken(name));

/** Injects the `MessageAcceptor` of the inbox registered with `name` (the default inbox without one). */
export const InjectMessageAcceptor = (name?: string): InjectDecorator =>
  Inject(getInboxToken(MessageAcceptor, name));

/** Injects the `MessageManagement` of the inbox registered with `name` (the default inbox without one). */
export const InjectMessageManagement = (name?: string): InjectDecorator =>
  Inject(getInboxToken(MessageManagement, name));
