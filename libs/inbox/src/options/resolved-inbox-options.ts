import type { InboxOptionsSchema } from './inbox-options.schema';

/** The options with every default applied, validated once at startup (see InboxOptionsSchema). */
export type ResolvedInboxOptions = InboxOptionsSchema;
