import { DefaultKeyGenerator } from '@holdfast/failover';
import { failoverKey } from '@holdfast/failover/internal';

describe('failover keys', () => {
  it("matches Java's UUID.nameUUIDFromBytes byte for byte", () => {
    expect(failoverKey('failover-X', 'key-X')).toBe('ab731e45-8d4d-330c-b9a8-00651916d239');
  });

  it('is a version 3, IETF-variant UUID and depends on both name and key', () => {
    const key = failoverKey('countries', 'FR');
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(failoverKey('countries', 'DE')).not.toBe(key);
    expect(failoverKey('rates', 'FR')).not.toBe(key);
  });

  describe('DefaultKeyGenerator', () => {
    const gen = new DefaultKeyGenerator();
    class Code {
      constructor(readonly value: string) {}
      toString() {
        return `code-${this.value}`;
      }
    }

    it.each([
      [[], 'NO-ARG'],
      [['FR'], 'FR'],
      [[42, true], '42:true'],
      [[['a', 'b'], 'c'], 'a,b:c'],
      [[new Code('x')], 'code-x'],
      [[{ b: 2, a: { d: 1, c: [3] } }], '{"a":{"c":[3],"d":1},"b":2}'],
      // Java writes null as '' (the interop vector `null`); InjectiveKeyGenerator keeps 'null:null'.
      [[null, undefined], ':'],
      [[new Date('2026-01-02T03:04:05.006Z')], '2026-01-02T03:04:05.006Z'],
    ])('%j -> %s', (args, expected) => {
      expect(gen.key(args as unknown[])).toBe(expected);
    });

    it('gives equal keys for equal objects whatever the key order (never an identity hash)', () => {
      expect(gen.key([{ x: 1, y: 2 }])).toBe(gen.key([{ y: 2, x: 1 }]));
    });
  });
});
