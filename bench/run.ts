/**
 * npm run bench -- <name> [args]: runs bench/<name>.bench.ts. Each benchmark prints a table
 * with its figures and the ratio against a baseline measured in the same run.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const available = readdirSync(__dirname)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''));

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  if (!name || !available.includes(name)) {
    process.stderr.write(`usage: npm run bench -- <${available.join('|')}> [args]\n`);
    process.exit(2);
  }
  const bench = (await import(join(__dirname, `${name}.bench.ts`))) as {
    main(args: string[]): Promise<void>;
  };
  await bench.main(args);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
