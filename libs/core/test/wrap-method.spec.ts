import 'reflect-metadata';
import { SetMetadata } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SCHEDULE_CRON_OPTIONS } from '@nestjs/schedule/dist/schedule.constants';
import { wrapMethod, type AroundMethod } from '@holdfast/core/kit';

const MINE = 'holdfast:test:wrapped';
const OTHER = 'holdfast:test:other';

/** A decorator built on wrapMethod: records each call, then runs the method when `enabled`. */
function Guarded(label: string): MethodDecorator {
  return (_target, _key, descriptor) => {
    const around: AroundMethod<Job> = (job, original, args) => {
      job.seen.push(`${label}(${args.join(',')})`);
      return job.enabled ? original.apply(job, args) : undefined;
    };
    const wrapped = wrapMethod<Job>(descriptor, around);
    Reflect.defineMetadata(MINE, label, wrapped);
  };
}

class Job {
  enabled = true;
  seen: string[] = [];
  total = 0;

  @Guarded('add')
  add(a: number, b: number): number {
    this.total += a + b;
    return this.total;
  }

  @Guarded('twice')
  twice(n: number): number {
    // a self call goes through the wrapper too
    return this.add(n, n);
  }

  @Guarded('cron')
  @Cron('*/5 * * * * *')
  @SetMetadata(OTHER, 'kept')
  tick(): string {
    return 'ticked';
  }

  @SetMetadata(OTHER, 'kept-too')
  @Cron('*/7 * * * * *')
  @Guarded('cronOuter')
  tock(): string {
    return 'tocked';
  }
}

describe('wrapMethod', () => {
  it('calls around with the instance, the original and the arguments, and returns its result', () => {
    const job = new Job();
    expect(job.add(1, 2)).toBe(3);
    expect(job.seen).toEqual(['add(1,2)']);
    job.enabled = false;
    expect(job.add(5, 5)).toBeUndefined();
    expect(job.total).toBe(3);
  });

  it('binds this per instance, self calls included', () => {
    const a = new Job();
    const b = new Job();
    expect(a.twice(2)).toBe(4);
    expect(b.add(10, 0)).toBe(10);
    expect(a.seen).toEqual(['twice(2)', 'add(2,2)']);
    expect(b.seen).toEqual(['add(10,0)']);
    expect(a.total).toBe(4);
  });

  it('keeps the method name', () => {
    expect(Job.prototype.add.name).toBe('add');
    expect(Job.prototype.tick.name).toBe('tick');
  });

  it("keeps other decorators' metadata in either order, and carries the caller's own", () => {
    expect(Reflect.getMetadata(MINE, Job.prototype.tick)).toBe('cron');
    expect(Reflect.getMetadata(OTHER, Job.prototype.tick)).toBe('kept');
    expect(Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, Job.prototype.tick)).toMatchObject({
      cronTime: '*/5 * * * * *',
    });
    // applied after wrapping: set straight on the wrapper
    expect(Reflect.getMetadata(MINE, Job.prototype.tock)).toBe('cronOuter');
    expect(Reflect.getMetadata(OTHER, Job.prototype.tock)).toBe('kept-too');
    expect(Reflect.getMetadata(SCHEDULE_CRON_OPTIONS, Job.prototype.tock)).toMatchObject({
      cronTime: '*/7 * * * * *',
    });
  });

  it('does not touch the original', () => {
    const original = function original(): number {
      return 1;
    };
    Reflect.defineMetadata(OTHER, 'on-original', original);
    const descriptor: PropertyDescriptor = { value: original };
    const wrapped = wrapMethod(descriptor, (instance, method, args) => method.apply(instance, args));
    Reflect.defineMetadata(MINE, 'wrapper-only', wrapped);
    expect(descriptor.value).toBe(wrapped);
    expect(wrapped).not.toBe(original);
    expect(Reflect.getMetadata(MINE, original)).toBeUndefined();
    expect(Reflect.getMetadata(OTHER, wrapped)).toBe('on-original');
  });

  it('throws a TypeError on a descriptor without a method', () => {
    expect(() => wrapMethod({ get: () => 1 }, () => undefined)).toThrow(TypeError);
    expect(() => wrapMethod({ value: 42 }, () => undefined)).toThrow(TypeError);
  });
});
