/**
 * Where fcntl succeeds yet the lock stays on this host (NFS `nolock` / `local_lock`, CIFS `nobrl`),
 * read from /proc/self/mountinfo: the shared-file locker's mode 'os' refuses such a mount at startup.
 */
import { localOnlyLocks, mountOf, parseMountInfo } from '../src/lock/file-lock-mount';
import { lockHolderPid } from '../src/lock/process-file-lock';

const MOUNTINFO = [
  '22 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
  '40 22 0:45 / /srv/amq rw,relatime shared:80 - nfs4 nas:/amq rw,vers=4.2,hard,proto=tcp,local_lock=none,addr=10.0.0.5',
  '41 22 0:46 / /srv/old rw,relatime - nfs nas:/old rw,vers=3,hard,nolock,proto=tcp,local_lock=all,addr=10.0.0.5',
  '42 22 0:47 / /srv/local\\040posix rw,relatime - nfs4 nas:/x rw,vers=4.1,local_lock=posix',
  '43 22 0:48 / /srv/smb rw,relatime - cifs //nas/share rw,vers=3.0,nobrl,cache=strict',
].join('\n');

describe('mount check of the shared-file lock', () => {
  const mounts = parseMountInfo(MOUNTINFO);

  it('finds the deepest mount above a path (escaped names included)', () => {
    expect(mountOf('/srv/amq/kahadb/lock', mounts)?.mountPoint).toBe('/srv/amq');
    expect(mountOf('/srv/amqx/lock', mounts)?.mountPoint).toBe('/');
    expect(mountOf('/srv/local posix/lock', mounts)?.fsType).toBe('nfs4');
  });

  it('accepts NFSv4 with server locks and a local disk', () => {
    expect(localOnlyLocks(mountOf('/srv/amq/lock', mounts))).toBeUndefined();
    expect(localOnlyLocks(mountOf('/var/lib/app/lock', mounts))).toBeUndefined();
  });

  it('names the option that keeps locks on this host', () => {
    expect(localOnlyLocks(mountOf('/srv/old/lock', mounts))).toBe('nfs mounted with local_lock=all');
    expect(localOnlyLocks(mountOf('/srv/local posix/lock', mounts))).toBe(
      'nfs4 mounted with local_lock=posix',
    );
    expect(localOnlyLocks(mountOf('/srv/smb/lock', mounts))).toBe('cifs mounted with nobrl');
  });

  it('reads the holder pid of a POSIX lock from /proc/locks text by device and inode', () => {
    const locks = [
      '1: POSIX  ADVISORY  WRITE 4242 fe:00:2146498 0 EOF',
      '2: FLOCK  ADVISORY  WRITE 77 fe:00:99 0 EOF',
    ].join('\n');
    // dev 0xfe00: major 0xfe, minor 0.
    expect(lockHolderPid({ dev: 0xfe00, ino: 2146498 }, locks)).toBe(4242);
    expect(lockHolderPid({ dev: 0xfe00, ino: 99 }, locks)).toBeUndefined();
    expect(lockHolderPid({ dev: 0xfe01, ino: 2146498 }, locks)).toBeUndefined();
  });
});
