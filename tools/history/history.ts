/**
 * The shared history of a multi-process test: every process (Node or Java) appends one JSON
 * object per line to the same file, and `checkHistory` verifies the run afterwards.
 *
 * Each line is written with a single `write` on a file opened for appending, so lines of
 * concurrent writers never interleave. Times are epoch milliseconds; `at` is the time the event
 * happened on the database's clock wherever the property compares processes (simba), and on
 * the writer's clock otherwise (the test names which).
 */
import { appendFileSync, readFileSync } from 'node:fs';

/** Who wrote an event: a stable id per process life (a restarted process gets a new one). */
interface Base {
  /** Process id in the history, e.g. `java-1234` or `node-5678`. */
  proc: string;
  /** Epoch ms. */
  at: number;
}

/**
 * Simba (or any lease-based mutex). `acquire` starts a term (the process now believes it owns),
 * `renew` extends it, `release` ends it: `at` of a release is when the process stopped believing
 * it owned, on the database clock. A term with no release (the process was killed) ends at the
 * `transitionAt` of its last acquire/renew, after which the database lets anyone acquire.
 */
export interface SimbaGrant extends Base {
  kind: 'simba';
  op: 'acquire' | 'renew';
  mutex: string;
  /** The fencing token of the grant (a number or a decimal string for BIGINTs). */
  token: number | string;
  /** Simba's optimistic lock (`version`), when the writer knows it: it must grow with every grant. */
  version?: number;
  /** The row as granted (database clock): `at` equals `acquiredAt`. */
  acquiredAt: number;
  ttlAt: number;
  transitionAt: number;
}

export interface SimbaRelease extends Base {
  kind: 'simba';
  op: 'release';
  mutex: string;
  token?: number | string;
}

/** Master/standby: a process is master from `master` to `demote`; `work` is what it did as master. */
export interface LockerEvent extends Base {
  kind: 'locker';
  op: 'master' | 'demote' | 'work';
  lock: string;
}

/** Inbox: `accept` once per accepted message, `deliver` per handler run, `park` when given up. */
export interface InboxEvent extends Base {
  kind: 'inbox';
  op: 'accept' | 'deliver' | 'park';
  id: string;
}

/** A `@Failover` answer: fresh from the upstream, or stale from the store with its `asOf`. */
export interface FailoverAnswer extends Base {
  kind: 'failover';
  op: 'answer';
  name: string;
  key?: string;
  fresh: boolean;
  /** Stale answers: when the served value was stored, and when it expires (or its expiry in ms). */
  asOf?: number;
  expireOn?: number;
  expiry?: number;
}

export type HistoryEvent = SimbaGrant | SimbaRelease | LockerEvent | InboxEvent | FailoverAnswer;

/** An event with its 1-based line number in the history file. */
export type HistoryEntry = HistoryEvent & { line: number };

/** Appends events of one process to a shared history file. */
export class HistoryWriter {
  constructor(
    readonly file: string,
    readonly proc: string,
  ) {}

  append(event: DistributiveOmit<HistoryEvent, 'proc'>): void {
    appendFileSync(this.file, `${JSON.stringify({ ...event, proc: this.proc })}\n`);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface ParsedHistory {
  entries: HistoryEntry[];
  /** Lines that are not a history event: `line: text`. */
  malformed: string[];
}

const KINDS: Record<string, readonly string[]> = {
  simba: ['acquire', 'renew', 'release'],
  locker: ['master', 'demote', 'work'],
  inbox: ['accept', 'deliver', 'park'],
  failover: ['answer'],
};

/** Parses history text (JSON lines); blank lines are ignored, anything else unknown is malformed. */
export function parseHistory(text: string): ParsedHistory {
  const entries: HistoryEntry[] = [];
  const malformed: string[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      malformed.push(`${line}: ${raw}`);
      return;
    }
    const event = value as Partial<HistoryEvent>;
    const ops = KINDS[String(event?.kind)];
    if (
      !ops?.includes(String(event.op)) ||
      typeof event.proc !== 'string' ||
      typeof event.at !== 'number' ||
      !Number.isFinite(event.at)
    ) {
      malformed.push(`${line}: ${raw}`);
      return;
    }
    entries.push({ ...(event as HistoryEvent), line });
  });
  return { entries, malformed };
}

export function readHistory(file: string): ParsedHistory {
  return parseHistory(readFileSync(file, 'utf8'));
}
