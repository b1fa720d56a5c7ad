import { HandlerRun } from '../src/delivery/handler-run';

// What a handler gets beside its message: `signal` and `claim` read as properties of the context itself,
// so that handlers may destructure it or pass `{ ...context }` on.
describe('the handler context', () => {
  it('has signal and claim as its own enumerable keys, kept by a spread', () => {
    const { context } = new HandlerRun('m-1');
    expect(Object.keys(context)).toEqual(['signal', 'claim']);
    const copy = { ...context };
    expect(copy.signal).toBeInstanceOf(AbortSignal);
    expect(copy.signal).toBe(context.signal);
    expect(copy.claim).toBe(context.claim);
    expect(copy.claim.messageId).toBe('m-1');
    expect(JSON.stringify(Object.keys(copy))).toBe('["signal","claim"]');
  });

  it('aborts its signal with the reason the call was given up for, read before or after', () => {
    const early = new HandlerRun('m-2');
    const { signal } = early.context;
    expect(signal.aborted).toBe(false);
    const reason = new Error('claim lost');
    early.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const late = new HandlerRun('m-3');
    late.abort(reason);
    expect(late.context.signal.aborted).toBe(true);
    expect(late.context.signal.reason).toBe(reason);
  });

  it('gives each call its own signal', () => {
    const a = new HandlerRun('m-4');
    const b = new HandlerRun('m-5');
    a.abort(new Error('timed out'));
    expect(a.context.signal.aborted).toBe(true);
    expect(b.context.signal.aborted).toBe(false);
  });
});
