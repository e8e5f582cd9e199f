import { BerthError, ErrorCodes } from '@berth/core';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { ExecHandle, ExecSpec, SandboxInfo, SandboxPathStat, SandboxRuntime, SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';
import { extract, pack } from 'tar-stream';

type Box = { id: string; name: string; spec: SandboxSpec; running: boolean; exitCode: number | null; oomKilled: boolean; startedAt: string | null; files: Map<string, Buffer> };

/**
 * What a scripted exec prints and how it ends; `stdin` is everything written before close. `emit`
 * prints a line at once (a harness that streams, then waits); the returned lines follow at the end.
 */
export type ExecScript = (input: {
  container: string;
  spec: ExecSpec;
  stdin: Promise<string>;
  emit: (line: string) => void;
}) => { lines: readonly string[]; exitCode: number } | Promise<{ lines: readonly string[]; exitCode: number }>;

class Channel<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private closed = false;
  push(item: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w({ value: item, done: false });
    } else this.items.push(item);
  }
  close(): void {
    this.closed = true;
    this.waiting?.({ value: undefined, done: true });
    this.waiting = null;
  }
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (this.waiting = resolve));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/**
 * An in-memory `SandboxRuntime` with Docker's semantics where they matter for wiring tests:
 * unique names (create of a taken name starts the existing one, rename onto a taken name fails),
 * idempotent stop/remove, label-filtered list, files, scripted exec, and an event stream fed by
 * `kill`/`stop`/`remove`. Counters (`created`) let tests assert "no duplicates".
 */
export class InMemorySandboxRuntime implements SandboxRuntime {
  private readonly boxes = new Map<string, Box>();
  private readonly listeners = new Set<Channel<SandboxRuntimeEvent>>();
  private nextId = 1;
  created = 0;
  /** While true, the engine does not answer: create, start and inspect fail as a stopped Docker engine's would. */
  down = false;
  /** Calls refused while `down`. */
  refused = 0;

  constructor(
    private readonly options: { now?: () => Date; execScript?: ExecScript } = {},
  ) {}

  private answer(): void {
    if (!this.down) return;
    this.refused++;
    throw new BerthError(ErrorCodes.UNREACHABLE, 503, 'the in-memory engine is down (connect ENOENT)');
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  private find(nameOrId: string): Box | undefined {
    const bare = nameOrId.replace(/^\//, '');
    return this.boxes.get(bare) ?? [...this.boxes.values()].find((b) => b.name === bare);
  }

  private info(box: Box): SandboxInfo {
    return {
      id: box.id,
      name: box.name,
      labels: { ...box.spec.labels },
      running: box.running,
      exitCode: box.running ? null : box.exitCode,
      oomKilled: box.oomKilled,
      startedAt: box.startedAt,
      // Like the Docker runtime: a relay port to be picked (`null`, a host sandbox) gets one of its own.
      egressRelayPort: box.spec.egress === undefined ? null : (box.spec.egress.relayPort ?? 40_000 + Number(box.id.slice(4))),
    };
  }

  private emit(kind: SandboxRuntimeEvent['kind'], box: Box): void {
    const event: SandboxRuntimeEvent = { kind, containerId: box.id, name: box.name, labels: { ...box.spec.labels }, exitCode: box.exitCode, at: this.now().toISOString() };
    for (const listener of this.listeners) listener.push(event);
  }

  async ensureRunning(spec: SandboxSpec): Promise<SandboxInfo> {
    await this.create(spec);
    return this.start(spec.name);
  }

  async create(spec: SandboxSpec): Promise<void> {
    this.answer();
    if (this.find(spec.name)) return;
    const box: Box = { id: `fake${String(this.nextId++).padStart(12, '0')}`, name: spec.name, spec, running: false, exitCode: null, oomKilled: false, startedAt: null, files: new Map() };
    this.boxes.set(box.id, box);
    this.created++;
  }

  async start(nameOrId: string): Promise<SandboxInfo> {
    this.answer();
    const box = this.find(nameOrId);
    if (!box) throw new Error(`no container ${nameOrId}`);
    if (!box.running) {
      box.running = true;
      box.exitCode = null;
      box.startedAt = this.now().toISOString();
      this.emit('start', box);
    }
    return this.info(box);
  }

  /** What a container was created with (its image, limits, network), as the engine would show it. */
  specOf(nameOrId: string): SandboxSpec | null {
    return this.find(nameOrId)?.spec ?? null;
  }

  async inspect(nameOrId: string): Promise<SandboxInfo | null> {
    this.answer();
    const box = this.find(nameOrId);
    return box ? this.info(box) : null;
  }

  async stop(nameOrId: string): Promise<void> {
    const box = this.find(nameOrId);
    if (box?.running) this.die(box, 0, false);
  }

  async remove(nameOrId: string): Promise<void> {
    const box = this.find(nameOrId);
    if (!box) return;
    if (box.running) this.die(box, 137, false);
    this.boxes.delete(box.id);
    this.emit('destroy', box);
  }

  /** Test hook: the container dies as under `docker kill` (or an OOM kill). */
  kill(nameOrId: string, options: { oom?: boolean } = {}): void {
    const box = this.find(nameOrId);
    if (!box?.running) throw new Error(`no running container ${nameOrId}`);
    this.die(box, 137, options.oom ?? false);
  }

  /** Test hook: the kernel OOM-kills a process inside the container, which itself lives on. */
  oomInside(nameOrId: string): void {
    const box = this.find(nameOrId);
    if (!box?.running) throw new Error(`no running container ${nameOrId}`);
    this.emit('oom', box);
  }

  private die(box: Box, exitCode: number, oom: boolean): void {
    box.running = false;
    box.exitCode = exitCode;
    box.oomKilled = oom;
    if (oom) this.emit('oom', box);
    this.emit('die', box);
  }

  async list(labels: Readonly<Record<string, string>>): Promise<readonly SandboxInfo[]> {
    return [...this.boxes.values()].filter((b) => Object.entries(labels).every(([k, v]) => b.spec.labels[k] === v)).map((b) => this.info(b));
  }

  async relabel(nameOrId: string, newName: string): Promise<void> {
    const box = this.find(nameOrId);
    if (!box) throw Object.assign(new Error(`No such container: ${nameOrId}`), { statusCode: 404 });
    if (this.find(newName)) throw Object.assign(new Error(`Conflict: name ${newName} is in use`), { statusCode: 409 });
    box.name = newName;
  }

  async exec(nameOrId: string, spec: ExecSpec): Promise<ExecHandle> {
    const box = this.find(nameOrId);
    if (!box?.running) throw new Error(`container ${nameOrId} is not running`);
    let stdin = spec.stdin ?? '';
    let closeStdin!: () => void;
    const stdinClosed = new Promise<string>((resolve) => (closeStdin = () => resolve(stdin)));
    if (spec.stdin !== undefined) closeStdin();
    const lines = new Channel<string>();
    const script = this.options.execScript ?? (() => ({ lines: [], exitCode: 0 }));
    const exit = Promise.resolve(script({ container: box.name, spec, stdin: stdinClosed, emit: (line) => lines.push(line) })).then((result) => {
      for (const line of result.lines) lines.push(line);
      lines.close();
      return result.exitCode;
    });
    return {
      lines,
      exit,
      write: (data) => {
        stdin += data;
      },
      closeStdin: () => closeStdin(),
      stderrTail: () => '',
    };
  }

  async readFile(nameOrId: string, path: string): Promise<Buffer | null> {
    return this.find(nameOrId)?.files.get(path) ?? null;
  }

  async writeFile(nameOrId: string, path: string, data: Buffer | string): Promise<void> {
    const box = this.find(nameOrId);
    if (!box) throw Object.assign(new Error(`No such container: ${nameOrId}`), { statusCode: 404 });
    box.files.set(path, Buffer.isBuffer(data) ? data : Buffer.from(data));
  }

  /** Regular files of the archive land in the container's file map (directories are implied by paths). */
  async putArchive(nameOrId: string, dir: string, archive: Readable): Promise<void> {
    const box = this.find(nameOrId);
    if (!box) throw Object.assign(new Error(`No such container: ${nameOrId}`), { statusCode: 404 });
    const entries = extract();
    const done = (async () => {
      for await (const entry of entries) {
        const chunks: Buffer[] = [];
        for await (const chunk of entry) chunks.push(chunk as Buffer);
        if (entry.header.type === 'file') box.files.set(posix.join(dir, entry.header.name), Buffer.concat(chunks));
      }
    })();
    archive.pipe(entries);
    await done;
  }

  async getArchive(nameOrId: string, path: string): Promise<Readable | null> {
    const files = this.filesUnder(nameOrId, path);
    if (files.length === 0) return null;
    const archive = pack();
    const base = posix.dirname(path);
    for (const [name, data] of files) archive.entry({ name: posix.relative(base, name), size: data.length, mtime: new Date(0), uid: 1000, gid: 1000 }, data);
    archive.finalize();
    return Readable.from(archive);
  }

  async stat(nameOrId: string, path: string): Promise<SandboxPathStat | null> {
    const files = this.filesUnder(nameOrId, path);
    if (files.length === 0) return null;
    const exact = files.find(([name]) => name === path);
    return { kind: exact ? 'file' : 'directory', size: exact ? exact[1].length : 0, mtime: new Date(0).toISOString() };
  }

  private filesUnder(nameOrId: string, path: string): [string, Buffer][] {
    return [...(this.find(nameOrId)?.files ?? [])].filter(([name]) => name === path || name.startsWith(`${path.replace(/\/$/, '')}/`));
  }

  async appendFile(nameOrId: string, path: string, data: string): Promise<void> {
    const box = this.find(nameOrId);
    if (!box?.running) throw new Error(`container ${nameOrId} is not running`);
    box.files.set(path, Buffer.concat([box.files.get(path) ?? Buffer.alloc(0), Buffer.from(data)]));
  }

  events(signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent> {
    const channel = new Channel<SandboxRuntimeEvent>();
    this.listeners.add(channel);
    const close = () => {
      this.listeners.delete(channel);
      channel.close();
    };
    if (signal.aborted) close();
    else signal.addEventListener('abort', close, { once: true });
    return channel;
  }
}
