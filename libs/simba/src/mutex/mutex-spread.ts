import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { monotonicMillis } from '@holdfast/core/kit';
import { MEMBER_ROW_PREFIX } from '../store/simba-mutex.table';
import type { ContendGate, ContendTiming, MutexContendService } from './mutex-contend.service';
import type { MutexOwner } from './mutex-owner';
import type { MutexRepository } from './mutex.repository';

/** How a spread group's member row is contended: what a contend service needs beside its mutex. */
export type MemberServiceFactory = (mutex: string, contenderId: string) => MutexContendService;

/** One member of a group as this instance last read the table: a contender id and what it owns. */
interface GroupView {
  /** Live members (their member rows, and this instance's own contenders), sorted. */
  members: string[];
  /** Rows of the group each member owns, by contender id. */
  owned: Map<string, number>;
  lo: number;
  hi: number;
  /** Members that may hold `hi` (the rest hold `lo`). */
  atHi: number;
}

interface Group {
  readonly prefix: string;
  /** The hash in its member rows' names. */
  readonly key: string;
  readonly services: Set<MutexContendService>;
  /** This instance's member rows, one per contender id it contends for the group with. */
  readonly members: Map<string, MutexContendService>;
  view?: GroupView;
  /** Monotonic time before which this instance releases nothing more of the group (after a release). */
  calmUntil: number;
}

/**
 * Spreads the mutexes of a group (`SimbaModule` `spread`: the mutexes whose names start with a
 * prefix) over the instances that contend for them, instead of leaving them all to whichever
 * instance tries first. Every member of a group owns a member row of its own (`holdfast:member:
 * <group>:<contender>`, renewed in the same rounds as its mutexes, so it ends when the instance
 * does); every few standby polls each instance reads the live member rows (one statement) and,
 * with the owners it read of the group's rows, the share of each member: `M` mutexes over `W`
 * members, at most ⌈M/W⌉ each and at least ⌊M/W⌋.
 * - A standby takes a free row of the group only while its instance is below its share (first
 *   the members below ⌊M/W⌋); a row free for longer than ttl + transition is taken by anyone, so a
 *   mutex never stays without an owner because of this.
 * - An instance above ⌈M/W⌉, or at it while another member is below ⌊M/W⌋ and more members are at
 *   ⌈M/W⌉ than M mod W allows, gives mutexes up (the members at ⌈M/W⌉ by contender id, the same
 *   order everywhere), the way `stop()` does: `onReleased` first, then the row. Simba's one
 *   conditional UPDATE still grants every row, so there are never two owners.
 * - Nothing moves while membership stays the same: a member at its share gives nothing up, and
 *   once a release is made the instance waits a few polls before it considers another.
 */
export class MutexSpread implements ContendGate {
  private readonly logger = new Logger(MutexSpread.name);
  private readonly groups = new Map<string, Group>();
  private readonly byService = new Map<MutexContendService, Group>();
  /** Attempts `mayTake` allowed that have not had their answer yet, per group and contender id. */
  private readonly taking = new Set<MutexContendService>();
  private running = false;

  constructor(
    private readonly prefixes: readonly string[],
    private readonly repository: () => MutexRepository,
    private readonly timing: ContendTiming,
    private readonly memberService: MemberServiceFactory,
  ) {}

  /** The interval of the membership reads: a few standby polls, at least a second. */
  private get intervalMs(): number {
    return Math.max(1_000, this.timing.standbyPoll * 4);
  }

  /** Makes `service` spread when its mutex belongs to a group (sets its gate). */
  enrol(service: MutexContendService): void {
    const prefix = this.prefixes.find((p) => service.mutex.startsWith(p));
    if (prefix === undefined) return;
    let group = this.groups.get(prefix);
    if (!group) {
      group = {
        prefix,
        key: createHash('sha256').update(prefix).digest('hex').slice(0, 12),
        services: new Set(),
        members: new Map(),
        calmUntil: 0,
      };
      this.groups.set(prefix, group);
    }
    service.gate = this;
    this.byService.set(service, group);
  }

  started(service: MutexContendService): void {
    const group = this.byService.get(service);
    if (!group) return;
    group.services.add(service);
    const id = service.contenderId;
    if (!group.members.has(id)) {
      const member = this.memberService(memberRow(group.key, id), id);
      group.members.set(id, member);
      member.start();
    }
    this.schedule();
  }

  stopped(service: MutexContendService): void {
    const group = this.byService.get(service);
    if (!group) return;
    group.services.delete(service);
    this.taking.delete(service);
    const id = service.contenderId;
    if (![...group.services].some((s) => s.contenderId === id)) {
      const member = group.members.get(id);
      group.members.delete(id);
      void member?.stop().catch(() => undefined);
    }
  }

  settled(service: MutexContendService): void {
    this.taking.delete(service);
  }

  mayTake(service: MutexContendService, owner: MutexOwner): boolean {
    const group = this.byService.get(service);
    const view = group?.view;
    if (!group || !view || this.orphaned(owner)) return this.take(service);
    const id = service.contenderId;
    const mine =
      this.ownedBy(group, id) +
      [...this.taking].filter((s) => this.byService.get(s) === group && s.contenderId === id).length;
    const starving = view.members.some((m) => m !== id && (view.owned.get(m) ?? 0) < view.lo);
    if (mine < view.lo || (mine < view.hi && !starving)) return this.take(service);
    return false;
  }

  /**
   * A row free for longer than ttl + transition: by then every member row of an instance that
   * ended has ended too (it was renewed with its mutexes), so the shares are right, and still
   * nobody below its share took it. Anyone may. Never for a row nobody ever owned (a new group:
   * the shares decide from the start).
   */
  private orphaned(owner: MutexOwner): boolean {
    return (
      owner.transitionAt > 0 &&
      owner.databaseNow - owner.transitionAt >= this.timing.ttl + this.timing.transition
    );
  }

  private take(service: MutexContendService): boolean {
    this.taking.add(service);
    return true;
  }

  /** The mutexes of `group` this instance's contender `id` believes it owns. */
  private ownedBy(group: Group, id: string): number {
    let n = 0;
    for (const s of group.services) if (s.contenderId === id && s.isOwner) n++;
    return n;
  }

  private schedule(): void {
    if (this.running) return;
    this.running = true;
    const timers = this.repository().timers;
    const name = `holdfast:simba:spread:${this.repository().queries.table}`;
    const tick = () => {
      if (![...this.groups.values()].some((g) => g.services.size)) {
        this.running = false;
        return;
      }
      void this.rebalanceAll().finally(() => {
        if (this.running) timers.set(name, this.intervalMs, tick);
      });
    };
    timers.set(name, 0, tick);
  }

  /** Stops the membership reads (the module is shutting down). */
  stop(): void {
    this.running = false;
    const repository = this.repository();
    repository.timers.clear(`holdfast:simba:spread:${repository.queries.table}`);
  }

  private async rebalanceAll(): Promise<void> {
    for (const group of this.groups.values()) {
      if (!group.services.size) continue;
      try {
        await this.rebalance(group);
      } catch (error) {
        // The database is unreachable: the contend loop reports the outage; nothing moves meanwhile.
        this.logger.debug(`Spread of '${group.prefix}': ${(error as Error).message}`);
      }
    }
  }

  private async rebalance(group: Group): Promise<void> {
    const live = new Set(await this.repository().members(group.key));
    for (const id of group.members.keys()) live.add(id);
    const members = [...live].sort();
    const owned = new Map<string, number>();
    for (const s of group.services) {
      const owner = s.isOwner ? s.contenderId : liveOwner(s.afterOwner);
      if (owner !== undefined) owned.set(owner, (owned.get(owner) ?? 0) + 1);
    }
    const total = new Set([...group.services].map((s) => s.mutex)).size;
    const lo = Math.floor(total / members.length);
    const hi = Math.ceil(total / members.length);
    const view: GroupView = { members, owned, lo, hi, atHi: total - lo * members.length };
    group.view = view;
    if (monotonicMillis() < group.calmUntil) return;
    for (const id of group.members.keys()) {
      const excess = this.excess(view, id, this.ownedBy(group, id));
      if (excess <= 0) continue;
      const mine = [...group.services].filter((s) => s.contenderId === id && s.isOwner);
      // The last in name order go: every instance sees the same order.
      mine.sort((a, b) => (a.mutex < b.mutex ? 1 : -1));
      let given = 0;
      for (const s of mine.slice(0, excess)) if (await s.yieldOwnership()) given++;
      if (given) {
        group.calmUntil = monotonicMillis() + 2 * this.intervalMs;
        this.logger.debug(
          `Spread of '${group.prefix}': gave up ${given} of ${mine.length} (${total} over ${members.length} instances)`,
        );
      }
    }
  }

  /** How many mutexes the member `id`, owning `mine`, gives up now. */
  private excess(view: GroupView, id: string, mine: number): number {
    if (mine > view.hi) return mine - view.hi;
    if (mine < view.hi || view.hi === view.lo) return 0;
    const starving = view.members.some((m) => m !== id && (view.owned.get(m) ?? 0) < view.lo);
    if (!starving) return 0;
    // Too many members at hi: the first `atHi` of them by id keep it, the others come down to lo.
    const atHi = view.members.filter((m) => (m === id ? mine : (view.owned.get(m) ?? 0)) >= view.hi);
    return atHi.indexOf(id) >= view.atHi ? 1 : 0;
  }
}

/** The owner of a row as read, while its lease runs; undefined when it is free. */
function liveOwner(owner: MutexOwner): string | undefined {
  return owner.hasOwner() && owner.transitionAt > owner.databaseNow ? owner.ownerId : undefined;
}

/** A member row's name: `holdfast:member:<group>:<hash of the contender id>`, at most 45 characters. */
export function memberRow(groupKey: string, contenderId: string): string {
  return `${MEMBER_ROW_PREFIX}${groupKey}:${createHash('sha256').update(contenderId).digest('hex').slice(0, 16)}`;
}
