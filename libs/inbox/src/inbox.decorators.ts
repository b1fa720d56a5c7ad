// The inbox's public decorators (implemented in decorators/).
export { InboxHandler, type InboxHandlerOptions } from './decorators/inbox-handler.decorator';
export {
  InjectInboxOptions,
  InjectMessageAcceptor,
  InjectMessageManagement,
} from './decorators/inject-inbox.decorators';
