import { parseMessageTypeLabel } from '@holdfast/inbox';
import { formatMessages } from '../admin-table';
import { auditMessages } from '../audit';
import {
  count,
  databaseOf,
  dryRunOption,
  inboxMaxRetries,
  jsonOption,
  maxRetriesOption,
  output,
  parseOptions,
  prefixOption,
  type CliCommand,
  type CliIo,
} from '../cli-command';
import { CliUsageError } from '../errors';
import {
  listMessagesCommand,
  MESSAGE_ACTIONS,
  messagesCommand,
  type MessageAction,
  type MessagesReport,
  type TypeSelection,
} from '../messages/inbox-messages';
import { formatHistory, messageHistoryCommand } from '../messages/message-history';

export type { MessageHistoryReport } from '../messages/message-history';

import { TYPE_PAUSE_ACTIONS, typePauseCommand, type TypePauseAction } from '../messages/type-pauses';

export type { TypePauseAction, TypePauseReport } from '../messages/type-pauses';
export type {
  MessageAction,
  MessageOutcome,
  MessagesReport,
  TypeSelection,
} from '../messages/inbox-messages';

const OPTIONS = {
  prefix: prefixOption,
  json: jsonOption,
  'max-retries': maxRetriesOption,
  status: { type: 'string' },
  type: { type: 'string' },
  namespace: { type: 'string' },
  limit: { type: 'string' },
  offset: { type: 'string' },
  'dry-run': dryRunOption,
  'all-matching': { type: 'boolean' },
  yes: { type: 'boolean' },
} as const;

export const messages: CliCommand = {
  name: 'messages',
  usage: `  messages list [--status S] [--type T] [--limit N] [--offset N] [--max-retries N] [--prefix P]
      the inbox's messages in delivery order (read-only); --offset skips that many (the next page)
  messages <retry|pause|resume|delete> (<id>... | --type T [--status S])
           [--dry-run] [--max-retries N] [--prefix P]
  messages <retry|pause|resume|delete> --all-matching [--type T] [--status S] [--yes]
      every message the filter matches, of any type unless --type: without --yes it only counts
      them and changes nothing (exit 0); with --yes it acts on all of them
      retry now (an exhausted message gets one more attempt), pause, resume or delete the messages
      named, or every message of a type (by default: retry and delete the parked ones, resume the
      paused ones, pause the due and retrying ones). --dry-run: change nothing, list what would change
  messages pause-type <T> [--reason R] | resume-type <T> | paused-types [--json] [--prefix P]
      pause a message type on every node (no node claims its messages, new ones included, until
      resume-type; a delivery already running finishes), resume it, or list the paused types with
      who paused them, when and why. T as listed: shop:order (any revision), shop:order@2, order
      (that name in any namespace), :order (without a namespace). Needs HOLDFAST_INBOX_PAUSE
      (holdfast migrate). resume-type of a type that is not paused is exit 1
      A type T is written as listed, namespace:name[@revision] (demo:note); a name alone matches
      it in any namespace (--type NAME --namespace NS is the same as --type NS:NAME). A type the
      inbox holds no message of is an error (exit 1) that names the types it holds
  messages history <id> [--limit N] [--prefix P] [--json]
      what became of a message, attempt by attempt, with each failure's error (read-only; needs
      InboxModule's \`history\` option, whose table it reads); exit 1 when there is none
`,
  async run(args, io) {
    const [action, ...rest] = args;
    if (TYPE_PAUSE_ACTIONS.includes(action as TypePauseAction))
      return typePauseCommand(action as TypePauseAction, rest, io);
    const { values, positionals } = parseOptions(rest, OPTIONS, true);
    if (action !== 'list' && action !== 'history' && !MESSAGE_ACTIONS.includes(action as MessageAction)) {
      throw new CliUsageError(
        action === undefined || action.startsWith('-')
          ? `messages needs an action: list, history, ${[...MESSAGE_ACTIONS, ...TYPE_PAUSE_ACTIONS].join(', ')}`
          : `unknown messages action '${action}' (list, history, ${[...MESSAGE_ACTIONS, ...TYPE_PAUSE_ACTIONS].join(', ')})`,
      );
    }
    if (action === 'history') return history(io, values, positionals);
    const max = inboxMaxRetries(io, values);
    if (max === undefined) {
      throw new CliUsageError(
        "messages needs the inbox's maxRetries (statuses depend on it): --max-retries N or HOLDFAST_INBOX_MAX_RETRIES",
      );
    }
    const selection: Selection = {
      io,
      values,
      ids: positionals,
      type: typeSelection(values.type, values.namespace),
      where: databaseOf(io, values),
      maxRetries: max,
    };
    const report = action === 'list' ? await list(selection) : await act(action as MessageAction, selection);
    // --all-matching without --yes has printed its count already.
    if (report === undefined) return 0;
    output(io, values.json, report, () =>
      formatMessages(report, { type: selection.type?.label, status: values.status }),
    );
    return report.messages.some((m) => m.result === 'not found') ? 1 : 0;
  },
};

/** The parsed arguments of `messages list` and of the actions. */
interface Selection {
  io: CliIo;
  values: ReturnType<typeof parseOptions<typeof OPTIONS, true>>['values'];
  ids: string[];
  type: TypeSelection | undefined;
  where: ReturnType<typeof databaseOf>;
  maxRetries: number;
}

/** `holdfast messages list`: read-only, one page. */
async function list({ values, ids, type, where, maxRetries }: Selection): Promise<MessagesReport> {
  if (ids.length) throw new CliUsageError(`messages list takes no ids (got '${ids[0]}')`);
  if (values['dry-run']) throw new CliUsageError('messages list changes nothing: no --dry-run');
  return listMessagesCommand({
    ...where,
    maxRetries,
    status: values.status,
    type,
    limit: count('--limit', values.limit) ?? 100,
    offset: count('--offset', values.offset) ?? 0,
  });
}

/**
 * `holdfast messages <retry|pause|resume|delete>`: the report of what changed (or would), or
 * undefined once `--all-matching` without `--yes` has printed how many messages match.
 */
async function act(action: MessageAction, selection: Selection): Promise<MessagesReport | undefined> {
  const { io, values, ids, type, where, maxRetries } = selection;
  if (values.limit !== undefined) throw new CliUsageError('--limit goes with messages list');
  if (values.offset !== undefined) throw new CliUsageError('--offset goes with messages list');
  const allMatching = values['all-matching'] ?? false;
  if (values.yes && !allMatching) throw new CliUsageError('--yes goes with --all-matching');
  if (allMatching && values['dry-run'])
    throw new CliUsageError('--all-matching without --yes changes nothing already: leave out --dry-run');
  // --all-matching without --yes: count what the filter matches, change nothing.
  const countOnly = allMatching && !values.yes;
  const report = await messagesCommand(
    action,
    { ids, type, status: values.status, allMatching },
    { ...where, maxRetries, dryRun: countOnly || (values['dry-run'] ?? false) },
  );
  if (!report.dryRun) io.stderr(auditMessages(io.env, report, where));
  if (!countOnly) return report;
  const matching = report.messages.filter((m) => m.result === 'would').length;
  const filter = [
    type ? `type ${type.label}` : 'any type',
    values.status ? `status ${values.status}` : `the statuses ${action} is for`,
  ].join(', ');
  output(
    io,
    values.json,
    { ...report, matching },
    () =>
      `holdfast messages ${action} --all-matching: ${matching} message(s) match (${filter}); nothing changed. ` +
      `Run again with --yes to ${action} ${matching === 1 ? 'it' : 'them'}.\n`,
  );
  return undefined;
}

/** `holdfast messages history <id>`: one id, no filter, nothing changed. */
async function history(
  io: CliIo,
  values: { json?: boolean; limit?: string; prefix?: string; type?: string; status?: string },
  ids: string[],
): Promise<number> {
  if (ids.length !== 1) throw new CliUsageError(`messages history takes one message id (got ${ids.length})`);
  if (values.type !== undefined || values.status !== undefined)
    throw new CliUsageError('messages history takes a message id, not --type or --status');
  const report = await messageHistoryCommand({
    ...databaseOf(io, values),
    id: ids[0],
    limit: count('--limit', values.limit) ?? 100,
  });
  output(io, values.json, report, () => formatHistory(report));
  return report.entries.length ? 0 : 1;
}

/**
 * `--type` (and the older `--namespace` beside a bare name) as a type selection: a label as the
 * CLI and the dashboard print it, `namespace:name[@revision]` (parseMessageTypeLabel).
 */
function typeSelection(label: string | undefined, namespace: string | undefined): TypeSelection | undefined {
  if (label === undefined) {
    if (namespace !== undefined) throw new CliUsageError('--namespace goes with --type');
    return undefined;
  }
  const filter = parseMessageTypeLabel(label);
  if (!filter.name) {
    throw new CliUsageError(
      `--type '${label}' names no type: write namespace:name, with @revision when it has one (e.g. demo:note)`,
    );
  }
  if (namespace === undefined) return { filter, label };
  if (filter.namespace !== undefined) {
    throw new CliUsageError(
      `--type '${label}' has a namespace already: leave out --namespace '${namespace}'`,
    );
  }
  return { filter: { ...filter, namespace }, label: `${namespace}:${label}` };
}
