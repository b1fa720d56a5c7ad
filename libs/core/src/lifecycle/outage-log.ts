import { isConnectionError, sqlErrorCode } from '../database/sql-errors';
import { monotonicMillis } from '../time/monotonic';

/** What an outage log writes to: Nest's Logger (or anything shaped like it). */
export interface OutageLogger {
  warn(message: string): void;
  log(message: string): void;
  debug?(message: string): void;
}

/** What kind of outage a driver error says, for the one warning: [code set, words]. */
const KINDS: [ReadonlySet<string>, string][] = [
  [new Set(['ECONNREFUSED']), 'connection refused'],
  [
    new Set([
      'ECONNRESET',
      'EPIPE',
      'ECONNABORTED',
      'PROTOCOL_CONNECTION_LOST',
      '2013',
      '2006',
      '08006',
      '08003',
    ]),
    'connection lost',
  ],
  [new Set(['ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']), 'server unreachable'],
  [new Set(['HOLDFAST_CORE_SQL_TIMEOUT', 'PROTOCOL_SEQUENCE_TIMEOUT']), 'no answer in time'],
  [new Set(['57P01', '1053', 'ER_SERVER_SHUTDOWN']), 'server shutting down'],
  [new Set(['57P02', '1927', 'ER_CONNECTION_KILLED']), 'connection terminated by the server'],
  [new Set(['57P03']), 'server starting up'],
  [
    new Set([
      '25006',
      '1290',
      '1792',
      'ER_OPTION_PREVENTS_STATEMENT',
      'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION',
    ]),
    'read-only',
  ],
  [new Set(['1047', 'ER_UNKNOWN_COM_ERROR']), 'cluster node not ready'],
];

/**
 * One line saying why the database cannot serve, without a stack or an error class name:
 * "connection refused: connect ECONNREFUSED 127.0.0.1:5432", "read-only (25006): cannot execute
 * UPDATE in a read-only transaction".
 */
export function outageCause(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown; driverError?: { message?: unknown } } | undefined;
  // The driver's own words, first line only, without a class name in front.
  const message = String(e?.driverError?.message ?? e?.message ?? error ?? 'unknown error')
    .split('\n')[0]
    .replace(/^\w*Error: /, '');
  const own = typeof e?.code === 'string' ? e.code : undefined;
  const code = sqlErrorCode(error) ?? own;
  const kind =
    KINDS.find(
      ([codes]) => (code !== undefined && codes.has(code)) || (own !== undefined && codes.has(own)),
    )?.[1] ??
    (/Connection terminated|connection is closed|Connection lost/i.test(message)
      ? 'connection lost'
      : undefined) ??
    (/read-only/i.test(message) ? 'read-only' : undefined);
  if (!kind) return message;
  // A code that says more than the words (a SQLSTATE or server errno) is kept, once.
  const shown = code && /^([0-9A-Z]{5}|\d{4})$/.test(code) && !message.includes(code) ? ` (${code})` : '';
  return `${kind}${shown}: ${message}`;
}

/**
 * The expected face of an outage (see isConnectionError: refused, reset or dropped connections, a
 * server shutting down or starting up, no answer in time, a read-only or not-ready node): logged
 * as one warning without a stack. Anything else is an error of the statement, the caller's to log.
 */
export function isOutageError(error: unknown): boolean {
  return isConnectionError(error);
}

export interface OutageLogOptions {
  /**
   * The outage ends once calls have worked for this long (default 0: at the first that works), so
   * a database that flaps is one outage.
   */
  holdDownMs?: number;
}

/**
 * One outage, one warning when it starts and one when it ends, per module instance (its
 * `subject`, e.g. "simba_mutex (hf_simba_mutex)"): the first failure is a warning naming its
 * cause in one line (no stack), the later ones are debug lines, and the first success (after
 * `holdDownMs`) is a warning saying how long it lasted. A read-only window (a switchover, a
 * standby behind the endpoint) is an outage of writes: reads that work do not end it.
 */
export class OutageLog {
  private since = 0;
  private failures = 0;
  private writesFail = false;
  private okSince = 0;
  private readonly holdDownMs: number;

  constructor(
    private readonly logger: OutageLogger,
    /** Names the module instance in both lines (a function: read when a line is written). */
    private readonly subject: string | (() => string),
    options: OutageLogOptions = {},
  ) {
    this.holdDownMs = options.holdDownMs ?? 0;
  }

  /** True between the first failure and the end of the outage. */
  get ongoing(): boolean {
    return this.failures > 0;
  }

  /**
   * A call failed: the outage's warning if it is the first failure, else a debug line.
   * `during` says what failed ("a delivery run"), `consequence` what happens meanwhile;
   * `write`: the call was a write (a read-only server fails writes and answers reads).
   */
  failed(error: unknown, options: { during?: string; consequence?: string; write?: boolean } = {}): void {
    const cause = outageCause(error);
    this.writesFail ||= options.write ?? true;
    this.okSince = 0;
    const during = options.during ? ` during ${options.during}` : '';
    if (this.failures++ === 0) {
      this.since = monotonicMillis();
      this.logger.warn(
        `${this.name()}: the database is unavailable${during} (${cause}); ` +
          `${options.consequence ? `${options.consequence}; ` : ''}retrying quietly until it answers again.`,
      );
    } else {
      this.logger.debug?.(`${this.name()}: still unavailable${during} (${cause})`);
    }
  }

  /** A call worked; `write`: it was a write (a read that works does not end an outage of writes). */
  succeeded(write = true): void {
    if (this.failures === 0 || (this.writesFail && !write)) return;
    const now = monotonicMillis();
    if (this.okSince === 0) this.okSince = now;
    if (now - this.okSince < this.holdDownMs) return;
    this.logger.warn(
      `${this.name()}: the database answers again after ${Math.round(this.okSince - this.since)} ms ` +
        `(${this.failures} failed attempt(s)).`,
    );
    this.failures = 0;
    this.writesFail = false;
    this.okSince = 0;
  }

  private name(): string {
    return typeof this.subject === 'function' ? this.subject() : this.subject;
  }
}
