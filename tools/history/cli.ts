/**
 * Checks a shared history file and prints the report; exit code 1 when a property fails.
 *   node -r ./tools/register.js tools/history/cli.ts <history.jsonl> [--tolerance-ms N]
 */
import { checkHistory, formatReport } from './check';
import { readHistory } from './history';

function main(argv: string[]): number {
  const file = argv.find((a) => !a.startsWith('--'));
  const toleranceArg = argv.indexOf('--tolerance-ms');
  const toleranceMs = toleranceArg >= 0 ? Number(argv[toleranceArg + 1]) : 0;
  if (!file || !Number.isFinite(toleranceMs)) {
    console.error('usage: tools/history/cli.ts <history.jsonl> [--tolerance-ms N]');
    return 2;
  }
  const history = readHistory(file);
  const report = checkHistory(history, { toleranceMs });
  console.log(formatReport(history, report));
  return report.ok ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
