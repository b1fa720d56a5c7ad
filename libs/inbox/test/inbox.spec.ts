import { defineInboxSuite } from './inbox-suite';

defineInboxSuite('InboxModule');
