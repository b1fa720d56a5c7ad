import { defineInboxSuite } from './inbox-suite';

// The whole inbox suite once more, on tables made by camunda-bpm-correlate's DDL.
defineInboxSuite('InboxModule on the seed DDL', 'seed');
