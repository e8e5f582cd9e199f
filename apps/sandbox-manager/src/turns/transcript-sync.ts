import { posix } from 'node:path';
import type { TranscriptLocation } from '@berth/harness';
import type { SandboxRuntime, TranscriptMirror } from '@berth/ports';
import { execAndCollect } from '../sandboxes/sandbox-exec';

const NEWLINE = 0x0a;

/**
 * Mirrors a harness's own transcript files out of the sandbox into the store as they grow, and
 * writes them back into a new sandbox so the harness can resume its conversation there. Only
 * whole lines are mirrored: a chunk never ends inside a JSON line or a UTF-8 character.
 */
export class TranscriptSync {
  /** Transcript files last found per sandbox and session (size -1: unknown, read to compare). */
  private readonly known = new Map<string, { path: string; size: number }[]>();

  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly mirror: TranscriptMirror,
  ) {}

  /**
   * Appends what each transcript file gained since the last mirror; returns the bytes appended.
   * `quick` reads the files found by the last full mirror of this sandbox without listing again
   * (one round trip less when a turn ends); a full mirror after the harness exits finds new ones.
   */
  async mirrorOut(sandboxId: string, sessionId: string, locations: readonly TranscriptLocation[], quick = false): Promise<number> {
    const cacheKey = `${sandboxId}\n${sessionId}`;
    const known = quick ? this.known.get(cacheKey) : undefined;
    const files = known ?? (await this.listFiles(sandboxId, locations));
    if (known === undefined) this.known.set(cacheKey, files.map((f) => ({ path: f.path, size: -1 })));
    let appended = 0;
    for (const { path, size } of files) {
      const mirrored = await this.mirror.size(sessionId, path);
      if (size !== -1 && size <= mirrored) continue;
      const data = await this.runtime.readFile(sandboxId, path);
      if (data === null) continue;
      const end = data.lastIndexOf(NEWLINE) + 1;
      if (end <= mirrored) continue;
      await this.mirror.append({ session_id: sessionId, path, offset: mirrored, data: data.subarray(mirrored, end).toString('utf8') });
      appended += end - mirrored;
    }
    return appended;
  }

  /** Writes every mirrored file the sandbox lacks (a new sandbox after the old one died); returns how many. */
  async restore(sandboxId: string, sessionId: string): Promise<number> {
    const files = await this.mirror.files(sessionId);
    if (files.length === 0) return 0;
    const check = ['sh', '-c', 'for f in "$@"; do [ -f "$f" ] || echo "$f"; done', 'berth-restore', ...files.map((f) => f.path)];
    const missing = new Set((await execAndCollect(this.runtime, sandboxId, check)).lines);
    const toWrite = files.filter((f) => missing.has(f.path));
    if (toWrite.length === 0) return 0;
    const dirs = [...new Set(toWrite.map((f) => posix.dirname(f.path)))];
    await execAndCollect(this.runtime, sandboxId, ['mkdir', '-p', ...dirs]);
    for (const file of toWrite) await this.runtime.writeFile(sandboxId, file.path, file.data, 0o600);
    return toWrite.length;
  }

  /**
   * Whether the sandbox holds the conversation's transcript: a file matching one of the named
   * locations (a location without a name part only holds companions such as sub-agent files).
   */
  async present(sandboxId: string, locations: readonly TranscriptLocation[]): Promise<boolean> {
    const named = locations.filter((l) => l.nameEndsWith !== '');
    return (await this.listFiles(sandboxId, named)).some((f) => f.size > 0);
  }

  /** Every transcript file with its size, in one exec (a turn's end waits for this). */
  private async listFiles(sandboxId: string, locations: readonly TranscriptLocation[]): Promise<{ path: string; size: number }[]> {
    const script = 'while [ $# -ge 3 ]; do find "$1" -maxdepth "$2" -type f -name "*$3" -printf \'%s %p\\n\' 2>/dev/null; shift 3; done; exit 0';
    const args = locations.flatMap((l) => [l.dir, l.recursive ? '64' : '1', l.nameEndsWith]);
    const result = await execAndCollect(this.runtime, sandboxId, ['sh', '-c', script, 'berth-transcripts', ...args]);
    const files = new Map<string, number>();
    for (const line of result.lines) {
      const match = /^(\d+) (\/.+)$/.exec(line);
      if (match) files.set(match[2], Number(match[1]));
    }
    return [...files].map(([path, size]) => ({ path, size }));
  }
}
