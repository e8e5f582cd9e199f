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
  constructor(
    private readonly runtime: SandboxRuntime,
    private readonly mirror: TranscriptMirror,
  ) {}

  /** Appends what each transcript file gained since the last mirror; returns the bytes appended. */
  async mirrorOut(sandboxId: string, sessionId: string, locations: readonly TranscriptLocation[]): Promise<number> {
    let appended = 0;
    for (const path of await this.listFiles(sandboxId, locations)) {
      const data = await this.runtime.readFile(sandboxId, path);
      if (data === null) continue;
      const mirrored = await this.mirror.size(sessionId, path);
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

  private async listFiles(sandboxId: string, locations: readonly TranscriptLocation[]): Promise<string[]> {
    const found: string[] = [];
    for (const location of locations) {
      const depth = location.recursive ? [] : ['-maxdepth', '1'];
      const result = await execAndCollect(this.runtime, sandboxId, ['find', location.dir, ...depth, '-type', 'f', '-name', `*${location.nameEndsWith}`]);
      found.push(...result.lines.filter((l) => l.startsWith('/')));
    }
    return [...new Set(found)];
  }
}
