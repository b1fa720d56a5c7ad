import { hostname } from 'node:os';
import { INSTANCE_ID_MAX_LENGTH, instanceId, isThisInstance, ownerInstanceId } from '../src/kit';

describe('instance id', () => {
  it('is `<8 hex>:<pid>@<host>`, one value per process, at most 32 characters', () => {
    const id = instanceId();
    expect(id).toMatch(new RegExp(`^[0-9a-f]{8}:${process.pid}@`));
    expect(`${id.split('@')[1]}`).toBe(hostname().slice(0, id.length - id.indexOf('@') - 1));
    expect(id.length).toBeLessThanOrEqual(INSTANCE_ID_MAX_LENGTH);
    expect(instanceId()).toBe(id);
  });

  it('gives the first owner of a scope the process id, any further owner its own numbered id', () => {
    const first = ownerInstanceId('test:scope-a');
    const second = ownerInstanceId('test:scope-a');
    const other = ownerInstanceId('test:scope-b');
    expect(first).toBe(instanceId());
    expect(other).toBe(instanceId());
    expect(second).not.toBe(first);
    expect(second).toMatch(new RegExp(`^${instanceId().slice(0, 8)}\\.[0-9]+:${process.pid}@`));
    const unscoped = Array.from({ length: 50 }, () => ownerInstanceId());
    expect(new Set([...unscoped, first, second]).size).toBe(52);
    expect(Math.max(...unscoped.map((id) => id.length))).toBeLessThanOrEqual(INSTANCE_ID_MAX_LENGTH);
  });

  it('recognises every id of this process, also with a run number after it, and no other', () => {
    const random = instanceId().slice(0, 8);
    expect(isThisInstance(instanceId())).toBe(true);
    expect(isThisInstance(ownerInstanceId())).toBe(true);
    expect(isThisInstance(`${instanceId()}:17`)).toBe(true);
    const otherRandom = random === '00000000' ? '00000001' : '00000000';
    expect(isThisInstance(`${otherRandom}:${process.pid}@${hostname()}`)).toBe(false);
    expect(isThisInstance(`${random}:${process.pid + 1}@${hostname()}`)).toBe(false);
    expect(isThisInstance(`${hostname()}:${process.pid}:${random}`)).toBe(false);
    expect(isThisInstance(null)).toBe(false);
    expect(isThisInstance('')).toBe(false);
  });
});
