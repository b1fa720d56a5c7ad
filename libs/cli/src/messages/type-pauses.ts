import { validateTablePrefix } from '@holdfast/core/kit';
import { InboxTable, inboxTable, type PausedType } from '@holdfast/inbox';
import { table } from '../admin-table';
import { auditTypePause, cliActor } from '../audit';
import { databaseOf, jsonOption, output, parseOptions, prefixOption, type CliIo } from '../cli-command';
import { withDatabase } from '../database';
import { CliUsageError, InboxTableMissingError } from '../errors';

/** `holdfast messages <pause-type|resume-type|paused-types>`: the types paused across the cluster. */
export const TYPE_PAUSE_ACTIONS = ['pause-type', 'resume-type', 'paused-types'] as const;
export type TypePauseAction = (typeof TYPE_PAUSE_ACTIONS)[number];

/** What a type-pause command did, and the types paused afterwards. */
export interface TypePauseReport {
  action: TypePauseAction;
  /** The type as paused or resumed (its label); absent for paused-types. */
  type?: string;
  /** paused (it was not before), replaced (it was: actor and reason are the new ones), resumed, or not paused. */
  result?: 'paused' | 'replaced' | 'resumed' | 'not paused';
  paused: PausedType[];
}

const OPTIONS = { prefix: prefixOption, json: jsonOption, reason: { type: 'string' } } as const;

/** Runs one type-pause command line (the arguments after the action); resolves with the exit code. */
export async function typePauseCommand(action: TypePauseAction, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions(args, OPTIONS, true);
  const listing = action === 'paused-types';
  if (listing && positionals.length)
    throw new CliUsageError(`messages paused-types takes no type (got '${positionals[0]}')`);
  if (!listing && positionals.length !== 1)
    throw new CliUsageError(`messages ${action} takes one type, namespace:name[@revision] (e.g. shop:order)`);
  if (action !== 'pause-type' && values.reason !== undefined)
    throw new CliUsageError('--reason goes with pause-type');
  const where = databaseOf(io, values);
  const prefix = validateTablePrefix(where.prefix ?? '');
  const type = listing ? undefined : labelOf(positionals[0]);
  const report = await withDatabase(where.url, listing, async (sql) => {
    const inbox = await InboxTable.open(sql, { tablePrefix: prefix });
    if (!inbox) throw new InboxTableMissingError(inboxTable({ tablePrefix: prefix }));
    let result: TypePauseReport['result'];
    if (action === 'pause-type') {
      const fresh = await inbox.pauseType(type!, { actor: cliActor(io.env), reason: values.reason });
      result = fresh ? 'paused' : 'replaced';
    } else if (action === 'resume-type') {
      result = (await inbox.resumeType(type!)) ? 'resumed' : 'not paused';
    }
    return {
      action,
      ...(type ? { type } : {}),
      ...(result ? { result } : {}),
      paused: await inbox.pausedTypes(),
    };
  });
  if (report.result && report.result !== 'not paused')
    io.stderr(auditTypePause(io.env, { action, type: type!, reason: values.reason }, where));
  output(io, values.json, report, () => formatTypePauses(report));
  return report.result === 'not paused' ? 1 : 0;
}

/** The type's label as paused (InboxTable.pauseLabel), a usage error when it names no type. */
function labelOf(label: string): string {
  try {
    return InboxTable.pauseLabel(label);
  } catch {
    throw new CliUsageError(
      `'${label}' names no type: write namespace:name, with @revision for one revision (e.g. shop:order)`,
    );
  }
}

function formatTypePauses(report: TypePauseReport): string {
  const head: Record<NonNullable<TypePauseReport['result']>, string> = {
    paused: `Paused type ${report.type}: no node claims its messages until resume-type.`,
    replaced: `Type ${report.type} was paused already: its pause now names you (and this reason).`,
    resumed: `Resumed type ${report.type}: its messages are delivered again.`,
    'not paused': `Type ${report.type} is not paused: nothing changed.`,
  };
  const rows = report.paused.map((p) => [p.type, p.pausedBy, p.pausedAt.toISOString(), p.reason ?? '']);
  return [
    ...(report.result ? [head[report.result]] : []),
    `${report.paused.length} paused type(s):`,
    ...table(['TYPE', 'PAUSED BY', 'PAUSED AT', 'REASON'], rows),
    '',
  ].join('\n');
}
