/**
 * One live ActiveMQ broker beside Holdfast locker processes on the same lock, through every
 * handover a team meets: a broker started while Holdfast is master stays slave, Holdfast's master
 * SIGKILLed hands over to the broker, the broker SIGKILLed hands over to a Holdfast standby, and a
 * broker restarted while Holdfast is master stays slave again. Never two masters: the terms of
 * every process (Holdfast's from its IPC messages, the broker's from its log) must not overlap.
 * Two JVM starts per pairing.
 */
import { monotonicMillis } from '@holdfast/core/kit';
import { LockerCluster, overlaps } from '../../locker/cluster';
import type { WorkerConfig } from '../../locker/workers/locker-worker';
import { ActiveMqBroker, MASTER_LINE, type BrokerOptions } from './broker';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Pairing {
  label: string;
  /** The Holdfast workers' config (locker, table, intervals), without a name. */
  holdfast: Omit<WorkerConfig, 'name'>;
  /** The broker's options for a broker of this name. */
  broker: (name: string) => BrokerOptions;
  /** The line a broker logs once it waits as a standby (slave). */
  slaveLine: RegExp;
  /** Both sides' lockAcquireSleepInterval (ms). */
  interval: number;
  /** Called with every process's pid and role every 50 ms while the scenario runs (a ground truth check). */
  sample?: (masters: { holdfast: number[]; brokers: number[] }) => void | Promise<void>;
  /** Checks of the store once the last Holdfast node is master. */
  finalCheck?: (holdfastMaster: { instanceId: string; pid: number }) => Promise<void>;
}

export interface PairingResult {
  /** ms from the SIGKILL of Holdfast's master to the broker's master line. */
  holdfastToBroker: number;
  /** ms from the SIGKILL of the broker to the Holdfast standby's `acquired`. */
  brokerToHoldfast: number;
}

/** Runs the whole scenario; throws on two masters or a handover that does not happen. */
export async function pairingScenario(p: Pairing): Promise<PairingResult> {
  const cluster = new LockerCluster();
  const brokers: ActiveMqBroker[] = [];
  const sampled: string[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling && p.sample) {
      const holdfast = [...cluster.instances.values()]
        .filter((i) => !i.child.killed && i.child.exitCode === null && i.child.signalCode === null)
        .filter((i) => {
          const last = [...i.messages].reverse().find((m) => m.type === 'acquired' || m.type === 'lost');
          return last?.type === 'acquired';
        })
        .map((i) => i.child.pid as number);
      const live = brokers.filter((b) => !b.exited && b.terms().some((t) => t.to >= monotonicMillis() - 1));
      try {
        await p.sample({ holdfast, brokers: live.map((b) => b.pid as number) });
      } catch (error) {
        sampled.push(String(error));
      }
      await sleep(50);
    }
  })();
  try {
    const standbyFor = async (broker: ActiveMqBroker, after: number) => {
      const first = await broker.line(
        new RegExp(`${p.slaveLine.source}|${MASTER_LINE.source}`),
        60_000,
        after,
      );
      if (!p.slaveLine.test(first.text)) {
        throw new Error(`${broker.options.name} became master beside Holdfast's master`);
      }
      // Several of its attempts: it must still be a slave.
      await sleep(3 * p.interval);
      if (broker.wasMaster(after))
        throw new Error(`${broker.options.name} became master beside Holdfast's master`);
    };

    // 1. Holdfast's node h1 is master; a broker started beside it stays slave.
    const t0 = monotonicMillis();
    cluster.spawn({ ...p.holdfast, name: 'h1' });
    await cluster.next('h1', 'acquired', 60_000, t0);
    const b1 = new ActiveMqBroker(p.broker('b1')).start();
    brokers.push(b1);
    await standbyFor(b1, t0);

    // 2. Holdfast's master SIGKILLed: the broker takes over.
    const h1Killed = await cluster.kill('h1');
    const b1Master = await b1.master(60_000, h1Killed);
    const holdfastToBroker = b1Master - h1Killed;

    // 3. A Holdfast node started beside the broker stays standby.
    const t3 = monotonicMillis();
    cluster.spawn({ ...p.holdfast, name: 'h2' });
    await cluster.next('h2', 'ready', 60_000, t3);
    await sleep(3 * p.interval);
    if (cluster.get('h2').messages.some((m) => m.type === 'acquired')) {
      throw new Error("h2 became master beside the broker's master");
    }

    // 4. The broker SIGKILLed: the Holdfast standby takes over.
    const b1Killed = await b1.kill();
    const h2Master = await cluster.next('h2', 'acquired', 60_000, b1Killed);
    const brokerToHoldfast = h2Master.at - b1Killed;

    // 5. A broker restarted while Holdfast is master stays slave.
    const t5 = monotonicMillis();
    const b2 = new ActiveMqBroker(p.broker('b2')).start();
    brokers.push(b2);
    await standbyFor(b2, t5);

    const status = await cluster.status('h2');
    if (status.role !== 'master') throw new Error(`h2 is ${status.role} at the end, not master`);
    await p.finalCheck?.({ instanceId: status.instanceId, pid: cluster.get('h2').child.pid as number });

    sampling = false;
    await sampler;
    const terms = [...cluster.terms({ h1: h1Killed }), ...brokers.flatMap((b) => b.terms())];
    const both = overlaps(terms);
    if (both.length) throw new Error(`two masters at once: ${both.join('; ')}`);
    if (sampled.length) throw new Error(`ground truth check failed: ${[...new Set(sampled)].join('; ')}`);
    console.log(
      `[activemq] ${p.label}: SIGKILL of Holdfast's master -> broker master after ${holdfastToBroker} ms; ` +
        `SIGKILL of the broker -> Holdfast master after ${brokerToHoldfast} ms (lockAcquireSleepInterval ` +
        `${p.interval} ms both sides)`,
    );
    return { holdfastToBroker, brokerToHoldfast };
  } catch (error) {
    for (const b of brokers) console.log(`--- broker ${b.options.name} log ---\n${b.log()}`);
    throw error;
  } finally {
    sampling = false;
    await sampler.catch(() => undefined);
    await cluster.closeAll();
    await Promise.all(brokers.map((b) => b.destroy()));
  }
}
