import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Every id is at most this long: Simba's own DDL makes `owner_id` a `CHAR(32)`, and a process
 * shows one id in every table, so the shortest column sets the length for all.
 */
export const INSTANCE_ID_MAX_LENGTH = 32;

const random = randomBytes(4).toString('hex');
const claimed = new Set<string>();
/** The last number given to an id: 1 is the process's own, numbered ids start at 2. */
let serial = 1;
const ID = /^([0-9a-f]{8})(?:\.[0-9]+)?:([0-9]+)@/;

/** `<random>[.<n>]:<pid>@<host>`, the host cut to fit (it only helps a reader; the rest is unique). */
function build(serial: number): string {
  const head = serial > 1 ? `${random}.${serial}` : random;
  return `${head}:${process.pid}@${hostname()}`.slice(0, INSTANCE_ID_MAX_LENGTH).trimEnd();
}

const PROCESS_ID = build(1);

/**
 * This process's id, the same in every Holdfast module, the dashboard, the logs and the metrics:
 * `<8 random hex>:<pid>@<host>`. `pid@host` is the JVM's own process name, the one Simba's JDBC
 * contenders write into the table a Java peer shares; the random part tells apart two processes
 * that reuse a pid on one host (pid 1 in every container). Host cut so the whole fits 32
 * characters.
 */
export function instanceId(): string {
  return PROCESS_ID;
}

/**
 * The id of one owner of `scope` (a mutex, a lock name): this process's {@link instanceId} for the
 * first owner of that scope, then `<random>.<n>:<pid>@<host>` for each further owner in the same
 * process (two applications in one process, as tests build them), so that two owners of one thing
 * never share an id and never take each other's lease for a renewal. Without a scope, a new
 * numbered id on every call.
 */
export function ownerInstanceId(scope?: string): string {
  if (scope === undefined || claimed.has(scope)) return build(++serial);
  claimed.add(scope);
  return PROCESS_ID;
}

/**
 * True when `id` was made in this process by {@link instanceId} or {@link ownerInstanceId},
 * whatever follows it (a cut host, a run number such as `:<n>` after a @ScheduledLock holder).
 */
export function isThisInstance(id: string | null | undefined): boolean {
  const match = typeof id === 'string' ? ID.exec(id) : null;
  return !!match && match[1] === random && match[2] === String(process.pid);
}
