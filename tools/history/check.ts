/**
 * Checks a shared history (see history.ts) after a run:
 * - simba: no two owners of a mutex at once (terms on the database clock), fencing tokens never
 *   go down within a term and strictly increase from one term to the next, and the row's
 *   `version` (Simba's optimistic lock), where recorded, grows with every grant;
 * - locker: no two masters of a lock at once, and no work by a process outside its master terms;
 * - inbox: every accepted message delivered (or parked) at least once; duplicates are counted;
 * - failover: no stale answer served after its expiry.
 * A failing check prints the offending slice of the history: the events involved and their
 * neighbours in time.
 */
import {
  readHistory,
  type FailoverAnswer,
  type HistoryEntry,
  type InboxEvent,
  type LockerEvent,
  type ParsedHistory,
  type SimbaGrant,
  type SimbaRelease,
} from './history';

export type Property =
  | 'history.malformed'
  | 'simba.two-owners'
  | 'simba.token-order'
  | 'simba.version-order'
  | 'locker.two-masters'
  | 'locker.work-outside-term'
  | 'inbox.lost'
  | 'failover.stale-after-expiry';

export interface Violation {
  property: Property;
  message: string;
  /** Line numbers of the events involved. */
  lines: number[];
}

/** One ownership term of a mutex (or master term of a lock) by one process. */
export interface Term {
  proc: string;
  start: number;
  end: number;
  /** true when the end was recorded (release/demote); false when inferred (process killed). */
  ended: boolean;
  tokens: bigint[];
  lines: number[];
}

export interface HistoryStats {
  events: number;
  simba: Record<string, { terms: number; owners: string[] }>;
  locker: Record<string, { terms: number; masters: string[]; work: number }>;
  inbox: { accepted: number; delivered: number; duplicates: number; parked: number; lost: number };
  failover: { fresh: number; stale: number };
}

export interface HistoryReport {
  ok: boolean;
  violations: Violation[];
  stats: HistoryStats;
}

export interface CheckOptions {
  /** Clock tolerance (ms) for the failover expiry check, where writers use their own clocks. Default 0. */
  toleranceMs?: number;
}

const groupBy = <T, K>(items: T[], key: (item: T) => K): Map<K, T[]> => {
  const map = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
};

const toToken = (token: unknown): bigint | undefined => {
  if (typeof token === 'number' && Number.isInteger(token)) return BigInt(token);
  if (typeof token === 'string' && /^-?\d+$/.test(token)) return BigInt(token);
  return undefined;
};

/** The ownership terms of one mutex, per process, in the order each process wrote its events. */
export function simbaTerms(events: HistoryEntry[], mutex: string): { terms: Term[]; problems: Violation[] } {
  const terms: Term[] = [];
  const problems: Violation[] = [];
  const mine = events.filter(
    (e): e is (SimbaGrant | SimbaRelease) & { line: number } => e.kind === 'simba' && e.mutex === mutex,
  );
  for (const [proc, list] of groupBy(mine, (e) => e.proc)) {
    let open: (Term & { lastTransition: number }) | undefined;
    const close = (end: number, ended: boolean) => {
      if (!open) return;
      terms.push({ ...open, end, ended });
      open = undefined;
    };
    for (const e of [...list].sort((a, b) => a.line - b.line)) {
      if (e.op === 'release') {
        if (open) {
          open.lines.push(e.line);
          close(e.at, true);
        }
        continue;
      }
      const token = toToken(e.token);
      if (token === undefined || ![e.acquiredAt, e.ttlAt, e.transitionAt].every(Number.isFinite)) {
        problems.push({
          property: 'history.malformed',
          message: `simba ${e.op} of ${proc} lacks a token or row times`,
          lines: [e.line],
        });
        continue;
      }
      if (e.op === 'acquire' && open) {
        // A new acquisition without a recorded release: the old term ended by the new one at the latest.
        close(Math.min(open.lastTransition, e.acquiredAt), false);
      }
      if (!open) {
        open = {
          proc,
          start: e.acquiredAt,
          end: e.transitionAt,
          ended: false,
          tokens: [],
          lines: [],
          lastTransition: e.transitionAt,
        };
      }
      open.tokens.push(token);
      open.lines.push(e.line);
      open.lastTransition = e.transitionAt;
    }
    if (open) close(open.lastTransition, false);
  }
  terms.sort((a, b) => a.start - b.start || a.lines[0] - b.lines[0]);
  return {
    terms: terms.map(({ proc, start, end, ended, tokens, lines }) => ({
      proc,
      start,
      end,
      ended,
      tokens,
      lines,
    })),
    problems,
  };
}

function checkSimba(entries: HistoryEntry[], violations: Violation[], stats: HistoryStats): void {
  const mutexes = new Set(entries.filter((e) => e.kind === 'simba').map((e) => (e as SimbaGrant).mutex));
  for (const mutex of mutexes) {
    const { terms, problems } = simbaTerms(entries, mutex);
    violations.push(...problems);
    stats.simba[mutex] = { terms: terms.length, owners: [...new Set(terms.map((t) => t.proc))].sort() };
    // No two owners at once: a term may start only after every earlier term of another process ended.
    for (let i = 0; i < terms.length; i++) {
      for (let j = 0; j < i; j++) {
        const [a, b] = [terms[j], terms[i]];
        if (a.proc !== b.proc && a.end > b.start) {
          violations.push({
            property: 'simba.two-owners',
            message:
              `mutex '${mutex}': ${b.proc} owned from ${b.start} while ${a.proc} still owned ` +
              `(${a.start}..${a.end}${a.ended ? '' : ', until its last transition_at'}): ${a.end - b.start} ms together`,
            lines: [...a.lines, ...b.lines],
          });
        }
      }
    }
    // Fencing tokens: never down within a term, strictly up from every earlier term to the next.
    let highest: { token: bigint; term: Term } | undefined;
    for (const term of terms) {
      for (let k = 1; k < term.tokens.length; k++) {
        if (term.tokens[k] < term.tokens[k - 1]) {
          violations.push({
            property: 'simba.token-order',
            message: `mutex '${mutex}': token of ${term.proc} went down within its term (${term.tokens[k - 1]} then ${term.tokens[k]})`,
            lines: term.lines.slice(k - 1, k + 1),
          });
        }
      }
      if (highest && term.tokens[0] <= highest.token) {
        violations.push({
          property: 'simba.token-order',
          message:
            `mutex '${mutex}': ${term.proc} was granted token ${term.tokens[0]} at ${term.start}, ` +
            `not above token ${highest.token} of an earlier term of ${highest.term.proc}`,
          lines: [...highest.term.lines, term.lines[0]],
        });
      }
      const max = term.tokens.reduce((m, t) => (t > m ? t : m), term.tokens[0]);
      if (!highest || max > highest.token) highest = { token: max, term };
    }
    // Simba's optimistic lock: every grant (whoever wrote it) raised `version`.
    const grants = entries
      .filter(
        (e): e is SimbaGrant & { line: number } =>
          e.kind === 'simba' && e.op !== 'release' && e.mutex === mutex && typeof e.version === 'number',
      )
      .sort((a, b) => a.acquiredAt - b.acquiredAt || a.line - b.line);
    for (let k = 1; k < grants.length; k++) {
      const [a, b] = [grants[k - 1], grants[k]];
      if (b.version! <= a.version!) {
        violations.push({
          property: 'simba.version-order',
          message: `mutex '${mutex}': ${b.proc}'s grant at ${b.acquiredAt} has version ${b.version}, not above ${a.version} of ${a.proc}'s grant at ${a.acquiredAt}`,
          lines: [a.line, b.line],
        });
      }
    }
  }
}

function checkLocker(entries: HistoryEntry[], violations: Violation[], stats: HistoryStats): void {
  const events = entries.filter((e): e is LockerEvent & { line: number } => e.kind === 'locker');
  for (const [lock, ofLock] of groupBy(events, (e) => e.lock)) {
    const terms: Term[] = [];
    let work = 0;
    for (const [proc, list] of groupBy(ofLock, (e) => e.proc)) {
      let open: Term | undefined;
      let last: (LockerEvent & { line: number }) | undefined;
      for (const e of [...list].sort((a, b) => a.line - b.line)) {
        last = e;
        if (e.op === 'master') {
          if (open) terms.push({ ...open, end: e.at, ended: false });
          open = { proc, start: e.at, end: e.at, ended: false, tokens: [], lines: [e.line] };
        } else if (e.op === 'demote') {
          if (open) terms.push({ ...open, end: e.at, ended: true, lines: [...open.lines, e.line] });
          open = undefined;
        } else {
          work++;
          if (open) {
            open.end = Math.max(open.end, e.at);
            continue;
          }
          const previous = [...terms].reverse().find((t) => t.proc === proc);
          violations.push({
            property: 'locker.work-outside-term',
            message: previous
              ? `lock '${lock}': ${proc} worked at ${e.at}, ${e.at - previous.end} ms after its term ended (demoted at ${previous.end})`
              : `lock '${lock}': ${proc} worked at ${e.at} without ever being master`,
            lines: [...(previous?.lines ?? []), e.line],
          });
        }
      }
      // A master that was killed: its term lasted at least until its last event.
      if (open) terms.push({ ...open, end: Math.max(open.end, last?.at ?? open.start), ended: false });
    }
    terms.sort((a, b) => a.start - b.start);
    for (let i = 0; i < terms.length; i++) {
      for (let j = 0; j < i; j++) {
        const [a, b] = [terms[j], terms[i]];
        if (a.proc !== b.proc && a.end > b.start) {
          violations.push({
            property: 'locker.two-masters',
            message: `lock '${lock}': ${b.proc} became master at ${b.start} while ${a.proc} was master (${a.start}..${a.end})`,
            lines: [...a.lines, ...b.lines],
          });
        }
      }
    }
    stats.locker[lock] = {
      terms: terms.length,
      masters: [...new Set(terms.map((t) => t.proc))].sort(),
      work,
    };
  }
}

function checkInbox(entries: HistoryEntry[], violations: Violation[], stats: HistoryStats): void {
  const events = entries.filter((e): e is InboxEvent & { line: number } => e.kind === 'inbox');
  const accepted = new Map<string, number>();
  const delivered = new Map<string, number>();
  const parked = new Set<string>();
  for (const e of events) {
    if (e.op === 'accept' && !accepted.has(e.id)) accepted.set(e.id, e.line);
    if (e.op === 'deliver') delivered.set(e.id, (delivered.get(e.id) ?? 0) + 1);
    if (e.op === 'park') parked.add(e.id);
  }
  const lost = [...accepted].filter(([id]) => !delivered.has(id) && !parked.has(id));
  let duplicates = 0;
  for (const count of delivered.values()) duplicates += count - 1;
  stats.inbox = {
    accepted: accepted.size,
    delivered: delivered.size,
    duplicates,
    parked: parked.size,
    lost: lost.length,
  };
  if (lost.length) {
    violations.push({
      property: 'inbox.lost',
      message: `${lost.length} accepted message(s) never delivered nor parked: ${lost
        .slice(0, 10)
        .map(([id]) => id)
        .join(', ')}${lost.length > 10 ? ', …' : ''}`,
      lines: lost.slice(0, 20).map(([, line]) => line),
    });
  }
}

function checkFailover(
  entries: HistoryEntry[],
  violations: Violation[],
  stats: HistoryStats,
  toleranceMs: number,
): void {
  for (const e of entries) {
    if (e.kind !== 'failover') continue;
    const answer = e as FailoverAnswer & { line: number };
    if (answer.fresh) {
      stats.failover.fresh++;
      continue;
    }
    stats.failover.stale++;
    const expireOn =
      answer.expireOn ??
      (answer.asOf !== undefined && answer.expiry !== undefined ? answer.asOf + answer.expiry : undefined);
    if (expireOn === undefined) {
      violations.push({
        property: 'history.malformed',
        message: `stale answer of '${answer.name}' by ${answer.proc} carries no expireOn (nor asOf + expiry)`,
        lines: [answer.line],
      });
    } else if (answer.at > expireOn + toleranceMs) {
      violations.push({
        property: 'failover.stale-after-expiry',
        message:
          `'${answer.name}'${answer.key ? ` key ${answer.key}` : ''}: ${answer.proc} served a value as of ${answer.asOf} ` +
          `at ${answer.at}, ${answer.at - expireOn} ms after it expired (${expireOn})`,
        lines: [answer.line],
      });
    }
  }
}

/** Runs every check on the parsed history. */
export function checkHistory(history: ParsedHistory, options: CheckOptions = {}): HistoryReport {
  const violations: Violation[] = history.malformed.map((text) => ({
    property: 'history.malformed' as const,
    message: `not a history event: line ${text}`,
    lines: [Number(text.slice(0, text.indexOf(':')))],
  }));
  const stats: HistoryStats = {
    events: history.entries.length,
    simba: {},
    locker: {},
    inbox: { accepted: 0, delivered: 0, duplicates: 0, parked: 0, lost: 0 },
    failover: { fresh: 0, stale: 0 },
  };
  checkSimba(history.entries, violations, stats);
  checkLocker(history.entries, violations, stats);
  checkInbox(history.entries, violations, stats);
  checkFailover(history.entries, violations, stats, options.toleranceMs ?? 0);
  return { ok: violations.length === 0, violations, stats };
}

const scopeOf = (e: HistoryEntry): string =>
  e.kind === 'simba' ? `simba:${e.mutex}` : e.kind === 'locker' ? `locker:${e.lock}` : e.kind;

/**
 * The offending slice of one violation: the events involved (marked `>>`) and the other events
 * of the same mutex/lock/kind within `padMs` of them, in time order, at most `maxLines` lines.
 */
export function historySlice(
  entries: HistoryEntry[],
  violation: Violation,
  { padMs = 1_000, maxLines = 40 } = {},
): string {
  const byLine = new Map(entries.map((e) => [e.line, e]));
  const involved = violation.lines.map((l) => byLine.get(l)).filter((e): e is HistoryEntry => !!e);
  if (!involved.length) return violation.lines.map((l) => `>> line ${l}`).join('\n');
  const scopes = new Set(involved.map(scopeOf));
  const from = Math.min(...involved.map((e) => e.at)) - padMs;
  const to = Math.max(...involved.map((e) => e.at)) + padMs;
  const marked = new Set(violation.lines);
  let slice = entries
    .filter((e) => marked.has(e.line) || (scopes.has(scopeOf(e)) && e.at >= from && e.at <= to))
    .sort((a, b) => a.at - b.at || a.line - b.line);
  if (slice.length > maxLines) {
    // Keep every involved event and the nearest neighbours around them.
    const keep = new Set<number>();
    slice.forEach((e, i) => {
      if (marked.has(e.line)) for (let k = i - 2; k <= i + 2; k++) keep.add(k);
    });
    slice = slice.filter((_, i) => keep.has(i)).slice(0, maxLines);
  }
  const origin = Math.min(...slice.map((e) => e.at));
  return slice
    .map((e) => {
      const { line, ...event } = e;
      return `${marked.has(line) ? '>>' : '  '} line ${String(line).padStart(5)}  +${String(e.at - origin).padStart(6)} ms  ${JSON.stringify(event)}`;
    })
    .join('\n');
}

/** The report as text: a summary line, then each violation with its slice of history. */
export function formatReport(history: ParsedHistory, report: HistoryReport, maxViolations = 10): string {
  const { stats } = report;
  const summary = [
    `${stats.events} events`,
    ...Object.entries(stats.simba).map(
      ([m, s]) => `mutex ${m}: ${s.terms} terms by ${s.owners.length} owners`,
    ),
    ...Object.entries(stats.locker).map(
      ([l, s]) => `lock ${l}: ${s.terms} master terms by ${s.masters.length}, ${s.work} work`,
    ),
    stats.inbox.accepted || stats.inbox.delivered
      ? `inbox: ${stats.inbox.accepted} accepted, ${stats.inbox.delivered} delivered, ${stats.inbox.parked} parked, ` +
        `${stats.inbox.lost} lost, ${stats.inbox.duplicates} duplicate deliveries`
      : '',
    stats.failover.fresh || stats.failover.stale
      ? `failover: ${stats.failover.fresh} fresh, ${stats.failover.stale} stale answers`
      : '',
  ].filter(Boolean);
  const lines = [`history: ${summary.join('; ')}`, `${report.violations.length} violation(s)`];
  for (const violation of report.violations.slice(0, maxViolations)) {
    lines.push('', `[${violation.property}] ${violation.message}`, historySlice(history.entries, violation));
  }
  if (report.violations.length > maxViolations)
    lines.push('', `… ${report.violations.length - maxViolations} more`);
  return lines.join('\n');
}

/** Reads, checks and throws with the formatted report (slices included) when a property fails. */
export function assertHistory(file: string, options: CheckOptions = {}): HistoryReport {
  const history = readHistory(file);
  const report = checkHistory(history, options);
  if (!report.ok) throw new Error(`history check failed for ${file}\n${formatReport(history, report)}`);
  return report;
}
