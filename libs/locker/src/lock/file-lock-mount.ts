import { readFileSync } from 'node:fs';

/** The mount a path lives on, as /proc/self/mountinfo describes it. */
export interface MountInfo {
  mountPoint: string;
  fsType: string;
  /** The per-mount and the file system's own options together. */
  options: string[];
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Parses /proc/self/mountinfo text (proc(5)): `id parent maj:min root mountpoint opts [optional…] - fstype source superopts`. */
export function parseMountInfo(text: string): MountInfo[] {
  const mounts: MountInfo[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const dash = fields.indexOf('-');
    if (fields.length < 7 || dash < 6 || fields.length < dash + 3) continue;
    mounts.push({
      mountPoint: unescape(fields[4]),
      fsType: fields[dash + 1],
      options: [...fields[5].split(','), ...(fields[dash + 3] ?? '').split(',')].filter(Boolean),
    });
  }
  return mounts;
}

/** The mount holding `path` (an absolute, resolved path): the longest mount point above it. */
export function mountOf(path: string, mounts: MountInfo[]): MountInfo | undefined {
  let best: MountInfo | undefined;
  for (const mount of mounts) {
    const point = mount.mountPoint;
    const inside =
      point === '/' || path === point || path.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (inside && (!best || point.length >= best.mountPoint.length)) best = mount;
  }
  return best;
}

/**
 * Why locks on this mount would be local to this host, or undefined. fcntl still succeeds there,
 * so nothing else tells: NFS mounted with `nolock` or `local_lock=posix|all` keeps locks in the
 * client's kernel (another host's broker or node never sees them), and CIFS with `nobrl` does not
 * send byte-range locks to the server.
 */
export function localOnlyLocks(mount: MountInfo | undefined): string | undefined {
  if (!mount) return undefined;
  const type = mount.fsType;
  if (type === 'nfs' || type === 'nfs4') {
    const local = mount.options.find((o) => o === 'local_lock=posix' || o === 'local_lock=all');
    if (local) return `${type} mounted with ${local}`;
    if (mount.options.includes('nolock')) return `${type} mounted with nolock`;
  }
  if ((type === 'cifs' || type === 'smb3') && mount.options.includes('nobrl')) {
    return `${type} mounted with nobrl`;
  }
  return undefined;
}

/** The mount of `path` on this machine (Linux only; undefined elsewhere or when unreadable). */
export function readMountOf(path: string): MountInfo | undefined {
  try {
    return mountOf(path, parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8')));
  } catch {
    return undefined;
  }
}
