import { keepProcessAlive, OutageLog, outageCause, processKeptAliveBy } from '../src/kit';

/** A Logger stand-in that keeps every line with its level. */
function recorder() {
  const lines: [string, string][] = [];
  return {
    lines,
    logger: {
      warn: (m: string) => lines.push(['warn', m]),
      log: (m: string) => lines.push(['log', m]),
      debug: (m: string) => lines.push(['debug', m]),
    },
  };
}

const driverError = (code: string | number, message: string) =>
  Object.assign(new Error(`QueryFailedError: ${message}`), {
    driverError: typeof code === 'number' ? { errno: code, message } : { code, message },
  });

describe('OutageLog', () => {
  it('warns once when an outage starts and once when it ends, debug lines between', () => {
    const { lines, logger } = recorder();
    const outage = new OutageLog(logger, 'Inbox T');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 5; i++)
      outage.failed(refused, { during: 'a delivery run', consequence: 'delivery waits' });
    expect(outage.ongoing).toBe(true);
    outage.succeeded();
    outage.succeeded();
    expect(outage.ongoing).toBe(false);
    expect(lines.map(([level]) => level)).toEqual(['warn', 'debug', 'debug', 'debug', 'debug', 'warn']);
    expect(lines[0][1]).toBe(
      'Inbox T: the database is unavailable during a delivery run (connection refused: connect ECONNREFUSED ' +
        '127.0.0.1:5432); delivery waits; retrying quietly until it answers again.',
    );
    expect(lines[5][1]).toMatch(
      /^Inbox T: the database answers again after \d+ ms \(5 failed attempt\(s\)\)\.$/,
    );
    expect(lines.some(([, m]) => /\n\s+at /.test(m))).toBe(false);
  });

  it('does not end an outage of writes on a read that works (a read-only window)', () => {
    const { lines, logger } = recorder();
    const outage = new OutageLog(logger, () => 'simba_mutex (t)');
    outage.failed(driverError('25006', 'cannot execute UPDATE in a read-only transaction'), { write: true });
    outage.succeeded(false);
    expect(outage.ongoing).toBe(true);
    outage.succeeded(true);
    expect(outage.ongoing).toBe(false);
    expect(lines.filter(([level]) => level === 'warn')).toHaveLength(2);
  });

  it('ends an outage only after calls have worked for holdDownMs', async () => {
    const { logger } = recorder();
    const outage = new OutageLog(logger, 'x', { holdDownMs: 30 });
    outage.failed(new Error('Connection terminated unexpectedly'));
    outage.succeeded();
    expect(outage.ongoing).toBe(true);
    await new Promise((r) => setTimeout(r, 40));
    outage.succeeded();
    expect(outage.ongoing).toBe(false);
  });
});

describe('outageCause', () => {
  it.each([
    [driverError('25006', 'cannot execute UPDATE in a read-only transaction'), 'read-only (25006): '],
    [
      driverError('57P01', 'terminating connection due to administrator command'),
      'server shutting down (57P01): ',
    ],
    [driverError('57P03', 'the database system is starting up'), 'server starting up (57P03): '],
    [driverError(1290, 'The MariaDB server is running with the --read-only option'), 'read-only (1290): '],
    [
      driverError(1047, 'WSREP has not yet prepared node for application use'),
      'cluster node not ready (1047): ',
    ],
    [driverError(2013, 'Lost connection to server during query'), 'connection lost (2013): '],
    [Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), 'connection lost: '],
  ])('names the kind of %s, without the class name', (error, prefix) => {
    const cause = outageCause(error);
    expect(cause.startsWith(prefix)).toBe(true);
    expect(cause).not.toMatch(/QueryFailedError|\n/);
  });

  it('keeps the first line of anything else', () => {
    expect(outageCause(new Error('syntax error at or near "SELEC"\n    at x'))).toBe(
      'syntax error at or near "SELEC"',
    );
  });
});

describe('keepProcessAlive', () => {
  it('holds the process while any work holds it, and each release counts once', () => {
    const before = processKeptAliveBy().length;
    const releaseA = keepProcessAlive('a');
    const releaseB = keepProcessAlive('b');
    expect(processKeptAliveBy().slice(before)).toEqual(['a', 'b']);
    releaseA();
    releaseA();
    expect(processKeptAliveBy().slice(before)).toEqual(['b']);
    releaseB();
    expect(processKeptAliveBy()).toHaveLength(before);
  });
});
