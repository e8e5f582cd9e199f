import type { Clock, IdGenerator } from '../ports';
import type { IdPrefix } from '../ids';

/** A clock tests move by hand. */
export class FixedClock implements Clock {
  constructor(private current: Date = new Date('2026-01-01T00:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(to: Date | string): void {
    this.current = new Date(to);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** Ids `<prefix>_1`, `<prefix>_2`, … per prefix, so expectations can name them. */
export class SequentialIds implements IdGenerator {
  private readonly counters = new Map<string, number>();
  next(prefix: IdPrefix): string {
    const n = (this.counters.get(prefix) ?? 0) + 1;
    this.counters.set(prefix, n);
    return `${prefix}_${n}`;
  }
}
