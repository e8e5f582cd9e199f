import { readFileSync } from 'node:fs';

/**
 * Preloaded into every service the chaos supervisor starts. When `BERTH_CHAOS_CLOCK_FILE` names a
 * file, the process's wall clock (`Date.now()`, `new Date()`) runs ahead by the milliseconds that
 * file holds, re-read every 100 ms, so a test can skew or jump one service's clock while it runs.
 * Timers (`setTimeout`) are monotonic and unaffected, as on a real host whose clock is stepped.
 */
const file = process.env['BERTH_CHAOS_CLOCK_FILE'];

if (file) {
  const RealDate = Date;
  let offsetMs = 0;
  const read = () => {
    try {
      offsetMs = Number(readFileSync(file, 'utf8').trim()) || 0;
    } catch {
      offsetMs = 0;
    }
  };
  read();
  setInterval(read, 100).unref();
  const skewedNow = () => RealDate.now() + offsetMs;

  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(skewedNow());
      else super(...(args as [string | number | Date]));
    }

    static override now(): number {
      return skewedNow();
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}
