import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertHistory, checkHistory, formatReport, simbaTerms } from '../../tools/history/check';
import { HistoryWriter, parseHistory, readHistory, type HistoryEvent } from '../../tools/history/history';

const lines = (...events: HistoryEvent[]) => events.map((e) => JSON.stringify(e)).join('\n');
const check = (...events: HistoryEvent[]) => checkHistory(parseHistory(lines(...events)));
const properties = (...events: HistoryEvent[]) => check(...events).violations.map((v) => v.property);

const grant = (
  proc: string,
  op: 'acquire' | 'renew',
  at: number,
  token: number | string,
  ttl = 1_000,
  transition = 2_000,
): HistoryEvent => ({
  kind: 'simba',
  op,
  proc,
  mutex: 'm',
  token,
  at,
  acquiredAt: at,
  ttlAt: at + ttl,
  transitionAt: at + transition,
});
const release = (proc: string, at: number): HistoryEvent => ({
  kind: 'simba',
  op: 'release',
  proc,
  mutex: 'm',
  at,
});

describe('history checker', () => {
  describe('simba', () => {
    // A clean run: A acquires, renews, releases; B acquires after; C after B's lease ran out (B killed).
    const clean = [
      grant('A', 'acquire', 1_000, 1),
      grant('A', 'renew', 2_000, 2),
      release('A', 2_500),
      grant('B', 'acquire', 2_600, 4),
      grant('C', 'acquire', 4_700, 5),
      release('C', 5_000),
    ];

    it('accepts a history with one owner at a time and growing tokens', () => {
      const report = check(...clean);
      expect(report.violations).toEqual([]);
      expect(report.stats.simba.m).toEqual({ terms: 3, owners: ['A', 'B', 'C'] });
    });

    it('ends a killed owner’s term at its last transition_at', () => {
      const { terms } = simbaTerms(parseHistory(lines(...clean)).entries, 'm');
      expect(terms.map((t) => [t.proc, t.start, t.end, t.ended])).toEqual([
        ['A', 1_000, 2_500, true],
        ['B', 2_600, 4_600, false],
        ['C', 4_700, 5_000, true],
      ]);
    });

    it('finds two owners at once when a release comes after the next acquire', () => {
      expect(
        properties(grant('A', 'acquire', 1_000, 1), grant('B', 'acquire', 1_500, 2), release('A', 1_600)),
      ).toEqual(['simba.two-owners']);
    });

    it('finds two owners at once when a killed owner’s lease still ran', () => {
      // A never released: its lease ran until transition_at 3000; B acquired at 2500.
      expect(properties(grant('A', 'acquire', 1_000, 1), grant('B', 'acquire', 2_500, 2))).toEqual([
        'simba.two-owners',
      ]);
    });

    it('finds a token that did not increase across owners, also as decimal strings', () => {
      expect(
        properties(grant('A', 'acquire', 1_000, 5), release('A', 1_500), grant('B', 'acquire', 1_600, 5)),
      ).toEqual(['simba.token-order']);
      expect(
        properties(
          grant('A', 'acquire', 1_000, '9007199254740993'),
          release('A', 1_500),
          grant('B', 'acquire', 1_600, '9007199254740992'),
        ),
      ).toEqual(['simba.token-order']);
    });

    it('finds a token going down within a term', () => {
      expect(properties(grant('A', 'acquire', 1_000, 5), grant('A', 'renew', 2_000, 4))).toEqual([
        'simba.token-order',
      ]);
    });

    it('finds a version that did not grow from one grant to the next, whoever granted', () => {
      const withVersion = (e: HistoryEvent, version: number) => ({ ...e, version }) as HistoryEvent;
      expect(
        properties(
          withVersion(grant('A', 'acquire', 1_000, 1_000), 1),
          withVersion(grant('A', 'renew', 2_000, 2_000), 2),
          release('A', 2_500),
          withVersion(grant('B', 'acquire', 2_600, 2_600), 4),
        ),
      ).toEqual([]);
      expect(
        properties(
          withVersion(grant('A', 'acquire', 1_000, 1_000), 1),
          release('A', 2_500),
          withVersion(grant('B', 'acquire', 2_600, 2_600), 1),
        ),
      ).toEqual(['simba.version-order']);
    });

    it('reports a grant without a token as malformed', () => {
      const bad = { ...grant('A', 'acquire', 1_000, 1), token: 'x' } as HistoryEvent;
      expect(properties(bad)).toEqual(['history.malformed']);
    });
  });

  describe('locker', () => {
    const ev = (proc: string, op: 'master' | 'demote' | 'work', at: number): HistoryEvent => ({
      kind: 'locker',
      op,
      proc,
      lock: 'L',
      at,
    });

    it('accepts work inside master terms', () => {
      const report = check(
        ev('A', 'master', 0),
        ev('A', 'work', 10),
        ev('A', 'demote', 20),
        ev('B', 'master', 30),
      );
      expect(report.violations).toEqual([]);
      expect(report.stats.locker.L).toEqual({ terms: 2, masters: ['A', 'B'], work: 1 });
    });

    it('finds work by a demoted master', () => {
      expect(properties(ev('A', 'master', 0), ev('A', 'demote', 20), ev('A', 'work', 25))).toEqual([
        'locker.work-outside-term',
      ]);
    });

    it('finds two masters at once', () => {
      expect(properties(ev('A', 'master', 0), ev('B', 'master', 10), ev('A', 'demote', 20))).toEqual([
        'locker.two-masters',
      ]);
    });
  });

  describe('inbox', () => {
    const ev = (op: 'accept' | 'deliver' | 'park', id: string, at = 0): HistoryEvent => ({
      kind: 'inbox',
      op,
      proc: 'P',
      id,
      at,
    });

    it('counts duplicates without failing', () => {
      const report = check(
        ev('accept', 'a'),
        ev('accept', 'b'),
        ev('deliver', 'a'),
        ev('deliver', 'a'),
        ev('park', 'b'),
      );
      expect(report.violations).toEqual([]);
      expect(report.stats.inbox).toEqual({ accepted: 2, delivered: 1, duplicates: 1, parked: 1, lost: 0 });
    });

    it('finds an accepted message that was never delivered', () => {
      const report = check(ev('accept', 'a'), ev('accept', 'b'), ev('deliver', 'a'));
      expect(report.violations.map((v) => [v.property, v.lines])).toEqual([['inbox.lost', [2]]]);
      expect(report.stats.inbox.lost).toBe(1);
    });
  });

  describe('failover', () => {
    const answer = (fresh: boolean, at: number, extra: object = {}): HistoryEvent =>
      ({ kind: 'failover', op: 'answer', proc: 'P', name: 'f', fresh, at, ...extra }) as HistoryEvent;

    it('accepts stale answers within their expiry', () => {
      const report = check(answer(true, 0), answer(false, 900, { asOf: 0, expiry: 1_000 }));
      expect(report.violations).toEqual([]);
      expect(report.stats.failover).toEqual({ fresh: 1, stale: 1 });
    });

    it('finds a stale answer served after it expired', () => {
      expect(properties(answer(false, 1_001, { asOf: 0, expireOn: 1_000 }))).toEqual([
        'failover.stale-after-expiry',
      ]);
      expect(
        checkHistory(parseHistory(lines(answer(false, 1_001, { asOf: 0, expireOn: 1_000 }))), {
          toleranceMs: 5,
        }).ok,
      ).toBe(true);
    });

    it('reports a stale answer without its age as malformed', () => {
      expect(properties(answer(false, 10))).toEqual(['history.malformed']);
    });
  });

  it('reports lines that are not events', () => {
    const report = checkHistory(parseHistory('{"kind":"simba"\nnot json\n\n'));
    expect(report.violations.map((v) => v.lines)).toEqual([[1], [2]]);
  });

  it('prints the offending slice with the events involved marked', () => {
    const history = parseHistory(
      lines(
        grant('X', 'acquire', 0, 1),
        release('X', 500),
        grant('A', 'acquire', 1_000, 2),
        grant('B', 'acquire', 1_500, 3),
        release('A', 1_600),
        grant('Z', 'acquire', 60_000, 9),
      ),
    );
    const text = formatReport(history, checkHistory(history));
    expect(text).toContain('[simba.two-owners]');
    const marked = text.split('\n').filter((l) => l.startsWith('>>'));
    expect(marked.map((l) => l.match(/line\s+(\d+)/)?.[1])).toEqual(['3', '4', '5']);
    expect(text).toContain('"proc":"X"'); // a neighbour within the window
    expect(text).not.toContain('"proc":"Z"'); // far away in time
  });

  it('writes lines from several writers and throws with the report', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'history-')), 'h.jsonl');
    writeFileSync(file, '');
    const a = new HistoryWriter(file, 'A');
    const b = new HistoryWriter(file, 'B');
    a.append({ kind: 'inbox', op: 'accept', id: 'm1', at: 1 });
    b.append({ kind: 'inbox', op: 'deliver', id: 'm1', at: 2 });
    expect(readHistory(file).entries.map((e) => e.proc)).toEqual(['A', 'B']);
    expect(assertHistory(file).ok).toBe(true);
    a.append({ kind: 'inbox', op: 'accept', id: 'm2', at: 3 });
    expect(() => assertHistory(file)).toThrow(/inbox.lost[\s\S]*>> line\s+3/);
  });
});
