import { DeadlineQueue } from '@holdfast/core/kit';

describe('DeadlineQueue', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires each item ms after its add, in the order added, on one timer', () => {
    const expired: string[] = [];
    const queue = new DeadlineQueue<string>(100, (item) => expired.push(item));
    queue.add('a');
    jest.advanceTimersByTime(30);
    queue.add('b');
    jest.advanceTimersByTime(30);
    queue.add('c');
    expect(jest.getTimerCount()).toBe(1);

    jest.advanceTimersByTime(39);
    expect(expired).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(29);
    expect(expired).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(expired).toEqual(['a', 'b']);
    jest.advanceTimersByTime(30);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(queue.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('never expires a removed item, and removing the first moves nothing earlier', () => {
    const expired: string[] = [];
    const queue = new DeadlineQueue<string>(100, (item) => expired.push(item));
    const a = queue.add('a');
    jest.advanceTimersByTime(50);
    queue.add('b');
    queue.remove(a);
    jest.advanceTimersByTime(60); // a's deadline has passed: nothing is due yet
    expect(expired).toEqual([]);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(40);
    expect(expired).toEqual(['b']);
    queue.remove(a); // already gone: a no-op
    expect(queue.size).toBe(0);
  });

  it('keeps the others on time when onExpire throws or adds', () => {
    const expired: string[] = [];
    const queue = new DeadlineQueue<string>(100, (item) => {
      expired.push(item);
      if (item === 'a') queue.add('from-a');
      if (item === 'b') throw new Error('onExpire failed');
    });
    queue.add('a');
    jest.advanceTimersByTime(10);
    queue.add('b');
    jest.advanceTimersByTime(10);
    queue.add('c');
    jest.advanceTimersByTime(80);
    expect(expired).toEqual(['a']);
    expect(() => jest.advanceTimersByTime(10)).toThrow('onExpire failed');
    expect(expired).toEqual(['a', 'b']);
    jest.advanceTimersByTime(10);
    expect(expired).toEqual(['a', 'b', 'c']);
    jest.advanceTimersByTime(80);
    expect(expired).toEqual(['a', 'b', 'c', 'from-a']);
  });

  it('clear() forgets every item and stops its timer', () => {
    const expired: string[] = [];
    const queue = new DeadlineQueue<string>(100, (item) => expired.push(item));
    queue.add('a');
    queue.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(200);
    expect(expired).toEqual([]);
    queue.add('b');
    jest.advanceTimersByTime(100);
    expect(expired).toEqual(['b']);
  });
});
