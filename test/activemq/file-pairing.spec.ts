/**
 * The file pairing: a live ActiveMQ broker on KahaDB (its shared-file-locker) and Holdfast's
 * `shared-file` locker on one directory. Both take an fcntl lock on `<directory>/lock`; the kernel
 * says who holds it (/proc/locks), and that must be the Holdfast master whenever Holdfast has one.
 * One broker JVM at a time (two starts), no database: in the default run.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activemqInstalled } from './support/broker';
import { pairingScenario } from './support/pairing';

const INTERVAL = 1_000;
const BROKER_PORT = 25540;

jest.setTimeout(180_000);

/** The pids /proc/locks names for POSIX write locks on `path` (none when the file is gone). */
function lockHolders(path: string): number[] {
  let ino: number;
  try {
    ino = statSync(path).ino;
  } catch {
    return [];
  }
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter(
      (line) => /^\d+:\s+POSIX\s+ADVISORY\s+WRITE\s/.test(line) && line.split(/\s+/)[5]?.endsWith(`:${ino}`),
    )
    .map((line) => Number(line.split(/\s+/)[4]));
}

describe('ActiveMQ broker beside Holdfast: the file pairing (KahaDB shared-file-locker / shared-file)', () => {
  it('has the broker to run (CI installs Debian activemq)', () => {
    expect(activemqInstalled()).toBe(true);
  });

  it('never two masters; SIGKILL hands over both ways; a broker (re)started beside Holdfast’s master stays slave', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'activemq-kahadb-'));
    const lock = join(directory, 'lock');
    await pairingScenario({
      label: 'file (KahaDB shared-file-locker / Holdfast shared-file)',
      interval: INTERVAL,
      holdfast: {
        prefix: '',
        interval: INTERVAL,
        keepAlive: 250,
        locker: { type: 'shared-file', directory },
      },
      broker: (name) => ({
        name,
        port: BROKER_PORT,
        store: { kind: 'kahadb', directory },
        lockAcquireSleepInterval: INTERVAL,
        lockKeepAlivePeriod: 1_000,
      }),
      slaveLine: /is locked by another server\. This broker is now in slave mode/,
      sample: ({ holdfast }) => {
        // A Holdfast node that says it is master holds the kernel's lock (and nobody else does).
        const holders = lockHolders(lock);
        for (const pid of holdfast) {
          if (holders.length !== 1 || holders[0] !== pid) {
            throw new Error(`Holdfast master pid ${pid} while /proc/locks names ${JSON.stringify(holders)}`);
          }
        }
      },
      finalCheck: async ({ pid }) => {
        expect(lockHolders(lock)).toEqual([pid]);
      },
    });
  });
});
