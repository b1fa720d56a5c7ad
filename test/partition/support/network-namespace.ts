import { execFileSync } from 'node:child_process';

const IP = '/usr/sbin/ip';

/**
 * A Linux network namespace joined to the host by a veth pair (needs root, as on the CI machine):
 * a process started inside it reaches the host only through `hostIp`, and `partition()` takes the
 * host end of the pair down, so every packet between them is dropped without a reset: open
 * connections go silent, new ones time out, as in a real partition. `heal()` brings it back.
 */
export class NetworkNamespace {
  readonly name: string;
  /** The host end's address: what a process inside connects to. */
  readonly hostIp: string;
  private readonly hostVeth: string;
  private readonly innerVeth: string;
  private readonly innerIp: string;
  private partitioned = false;

  private constructor(tag: string, subnet: number) {
    this.name = `hf${tag}`;
    this.hostVeth = `hf${tag}h`;
    this.innerVeth = `hf${tag}n`;
    // 10.231.x.y/30 pairs: the host end .1, the inner end .2 (x.y from the subnet number).
    const base = subnet * 4;
    const third = Math.floor(base / 256);
    this.hostIp = `10.231.${third}.${(base % 256) + 1}`;
    this.innerIp = `10.231.${third}.${(base % 256) + 2}`;
  }

  /** `tag`: a short name (interface names have at most 15 characters); `subnet`: 0–16,000, unique. */
  static create(tag: string, subnet: number): NetworkNamespace {
    const ns = new NetworkNamespace(tag, subnet);
    ns.destroy(); // a leftover of a killed run
    ip('netns', 'add', ns.name);
    ip('link', 'add', ns.hostVeth, 'type', 'veth', 'peer', 'name', ns.innerVeth);
    ip('link', 'set', ns.innerVeth, 'netns', ns.name);
    ip('addr', 'add', `${ns.hostIp}/30`, 'dev', ns.hostVeth);
    ip('link', 'set', ns.hostVeth, 'up');
    ip('netns', 'exec', ns.name, IP, 'addr', 'add', `${ns.innerIp}/30`, 'dev', ns.innerVeth);
    ip('netns', 'exec', ns.name, IP, 'link', 'set', ns.innerVeth, 'up');
    ip('netns', 'exec', ns.name, IP, 'link', 'set', 'lo', 'up');
    return ns;
  }

  /** `fork()` options that start the process inside the namespace (with `ip netns exec`). */
  forkOptions(registerPath: string): { execPath: string; execArgv: string[] } {
    return { execPath: IP, execArgv: ['netns', 'exec', this.name, process.execPath, '-r', registerPath] };
  }

  partition(): void {
    ip('link', 'set', this.hostVeth, 'down');
    this.partitioned = true;
  }

  heal(): void {
    ip('link', 'set', this.hostVeth, 'up');
    this.partitioned = false;
  }

  get isPartitioned(): boolean {
    return this.partitioned;
  }

  destroy(): void {
    for (const args of [
      ['netns', 'del', this.name],
      ['link', 'del', this.hostVeth],
    ]) {
      try {
        ip(...args);
      } catch {
        // not there
      }
    }
  }
}

function ip(...args: string[]): void {
  execFileSync(IP, args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
