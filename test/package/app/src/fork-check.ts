// The test kit outside this repository: forkTs runs a TypeScript worker with the application's
// own TypeScript loader (here ts-node), found from the working directory, no repository path.
import { join } from 'node:path';
import { forkTs, waitForExit, waitForMessage } from '@holdfast/testing';

async function main(): Promise<void> {
  const child = forkTs(join(__dirname, '..', 'src', 'fork-worker.ts'));
  const message = await waitForMessage<{ ready: boolean; prefix: string }>(child, (m) => m.ready, 60_000);
  await waitForExit(child);
  console.log(`forkTs ran a TypeScript worker (table prefix ${message.prefix})`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('fork check failed:', error);
    process.exit(1);
  },
);
