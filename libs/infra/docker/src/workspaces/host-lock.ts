import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isCode } from '@berth/core';

const POLL_MS = 20;
/** A lock older than this is broken: its holder died in a way we could not see (another PID namespace). */
const STALE_MS = 60_000;


/**
 * A lock shared by every process on this host that uses the same directory: `mkdir` is atomic, so
 * one process at a time holds `<dir>/<key>.lock`. The holder writes `<hostname> <pid>` into it; a
 * lock whose holder is a dead process of this host (a SIGKILLed sandbox-manager) is broken at once,
 * any other only once it is STALE_MS old. Callers keep their critical sections short (a mount, a mkfs).
 */
export class HostLocks {
  constructor(private readonly dir: string) {}

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const path = join(this.dir, `${key}.lock`);
    await mkdir(this.dir, { recursive: true });
    for (;;) {
      try {
        await mkdir(path);
        break;
      } catch (e) {
        if (!isCode(e, 'EEXIST')) throw e;
      }
      if (await this.abandoned(path)) await rm(path, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, POLL_MS));
    }
    try {
      await writeFile(join(path, 'holder'), `${hostname()} ${process.pid}`);
      return await work();
    } finally {
      await rm(path, { recursive: true, force: true });
    }
  }

  private async abandoned(path: string): Promise<boolean> {
    const holder = await readFile(join(path, 'holder'), 'utf8').catch(() => null);
    const [host, pid] = (holder ?? '').split(' ');
    if (host === hostname() && pid !== undefined && !alive(Number(pid))) return true;
    const made = await stat(path).then((s) => s.mtimeMs, () => null);
    return made !== null && Date.now() - made > STALE_MS;
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return !isCode(e, 'ESRCH');
  }
}
