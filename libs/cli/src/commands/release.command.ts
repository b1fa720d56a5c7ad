import { formatRelease } from '../admin-table';
import { auditRelease } from '../audit';
import {
  databaseOf,
  dryRunOption,
  jsonOption,
  lockTableOf,
  lockTableOptions,
  output,
  parseOptions,
  prefixOption,
  type CliCommand,
} from '../cli-command';
import { CliUsageError } from '../errors';
import { releaseCommand } from '../release/release';

export type { ReleaseKind, ReleaseReport } from '../release/release';

export const release: CliCommand = {
  name: 'release',
  usage: `  release <mutex|lock> <name> --owner ID [--dry-run] [--prefix P]
           [--lock-table NAME [--lock-columns ID,TIME,HOLDER]]
      free a simba mutex or a locker lock (HOLDFAST_LOCK row) whose owner you know is dead, if ID
      still holds it, so another instance takes it at once. --lock-table, --lock-columns: your
      LockerModule's lockTableName and lockColumns, if set
`,
  async run(args, io) {
    const { values, positionals } = parseOptions(
      args,
      {
        prefix: prefixOption,
        json: jsonOption,
        owner: { type: 'string' },
        'dry-run': dryRunOption,
        ...lockTableOptions,
      },
      true,
    );
    if (positionals.length > 2)
      throw new CliUsageError(`release takes a kind and a name (got '${positionals[2]}')`);
    const where = databaseOf(io, values);
    const report = await releaseCommand({
      ...where,
      kind: positionals[0],
      name: positionals[1],
      owner: values.owner,
      dryRun: values['dry-run'] ?? false,
      lockTable: lockTableOf(values),
    });
    if (report.result !== 'would')
      io.stderr(auditRelease(io.env, report, { ...where, ...lockTableOf(values) }));
    output(io, values.json, report, () => formatRelease(report));
    return report.result === 'released' || report.result === 'would' ? 0 : 1;
  },
};
