import type { Readable } from 'node:stream';

/**
 * A container runtime for session sandboxes. Every operation is idempotent: names and labels are
 * deterministic, "already exists" / "already stopped" / "no such container" are success states.
 */
export type SandboxSpec = Readonly<{
  /** Deterministic container name, e.g. `berth-sesn_…-g3` or `berth-pool-<env>-<n>`. */
  name: string;
  image: string;
  labels: Readonly<Record<string, string>>;
  env: Readonly<Record<string, string>>;
  network: 'none' | 'host' | 'bridge' | (string & {});
  user: string;
  workdir: string;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  readOnlyRoot: boolean;
  /** Command that keeps the container alive (the harness runs through exec). */
  cmd: readonly string[];
  /** Extra mounts (e.g. a persistent workspace volume). A bind of the Docker socket is refused. */
  mounts?: readonly SandboxMount[];
  /**
   * The sandbox's way out: the runtime makes it a directory of its own, which the egress proxy
   * serves a unix socket in, and mounts it read-only at `mountAt`. The relay in the sandbox listens
   * on `relayPort` (null: the runtime picks a free host port, for `host` sandboxes) and finds it in
   * `BERTH_EGRESS_RELAY_PORT`; `SandboxInfo.egressRelayPort` reports it.
   */
  egress?: Readonly<{ mountAt: string; relayPort: number | null }>;
}>;

export type SandboxMount = Readonly<{ type: 'volume' | 'bind' | 'tmpfs'; source?: string; target: string; readOnly?: boolean }>;

export type SandboxInfo = Readonly<{
  id: string;
  name: string;
  labels: Readonly<Record<string, string>>;
  running: boolean;
  exitCode: number | null;
  oomKilled: boolean;
  startedAt: string | null;
  /** The loopback port the sandbox's egress relay listens on, when it has one. */
  egressRelayPort?: number | null;
  /** The host (Docker engine, Kubernetes cluster) it runs on, when the runtime spans several. */
  host?: string;
}>;

export type ExecSpec = Readonly<{
  cmd: readonly string[];
  env?: Readonly<Record<string, string>>;
  workdir?: string;
  user?: string;
  stdin?: string;
}>;

export type ExecHandle = Readonly<{
  /** Lines of stdout as they arrive. */
  lines: AsyncIterable<string>;
  /** Resolves with the exit code when the process ends. */
  exit: Promise<number>;
  /** Writes to stdin (for harnesses that read JSON lines). */
  write(data: string): void;
  closeStdin(): void;
  /** The last few KiB of stderr, for error messages (never streamed into events). */
  stderrTail?(): string;
}>;

/** What is at a path in a container (the archive API's stat, without an exec). */
export type SandboxPathStat = Readonly<{ kind: 'file' | 'directory' | 'link' | 'other'; size: number; mtime: string }>;

export type SandboxRuntimeEvent = Readonly<{
  /** `lost`: the host it runs on stopped answering; the sandbox is gone for Berth even if it still runs there. */
  kind: 'die' | 'oom' | 'destroy' | 'start' | 'lost';
  containerId: string;
  name: string;
  labels: Readonly<Record<string, string>>;
  exitCode: number | null;
  at: string;
}>;

export interface SandboxRuntime {
  /** Creates and starts; an existing container with this name is inspected and started instead. */
  ensureRunning(spec: SandboxSpec): Promise<SandboxInfo>;
  /**
   * The two halves of `ensureRunning`, for a caller that must see a container counted before it
   * runs (placement across managers counts created containers against a host's limit): `create`
   * makes it stopped (an existing container with this name is kept), `start` starts it. A runtime
   * that cannot split them has neither.
   */
  create?(spec: SandboxSpec): Promise<void>;
  start?(nameOrId: string): Promise<SandboxInfo>;
  inspect(nameOrId: string): Promise<SandboxInfo | null>;
  stop(nameOrId: string, timeoutSeconds?: number): Promise<void>;
  remove(nameOrId: string): Promise<void>;
  /** Containers carrying all these labels. */
  list(labels: Readonly<Record<string, string>>): Promise<readonly SandboxInfo[]>;
  exec(nameOrId: string, spec: ExecSpec): Promise<ExecHandle>;
  /** Renames and relabels (claiming a warm-pool container for a session). */
  relabel?(nameOrId: string, newName: string): Promise<void>;
  readFile(nameOrId: string, path: string): Promise<Buffer | null>;
  writeFile(nameOrId: string, path: string, data: Buffer | string, mode?: number): Promise<void>;
  /** Streams a tar archive into the container, extracted under the existing directory `dir`, owners as the archive says. */
  putArchive(nameOrId: string, dir: string, archive: Readable): Promise<void>;
  /** A tar archive of `path` (a file, or a directory with everything below it), streamed; null when there is no such path. */
  getArchive(nameOrId: string, path: string): Promise<Readable | null>;
  /** Null when there is no such path. */
  stat(nameOrId: string, path: string): Promise<SandboxPathStat | null>;
  /** Appends to a file (created when missing) in one write, as the container's user: a harness's stdin feed grows this way. */
  appendFile(nameOrId: string, path: string, data: string): Promise<void>;
  /** The engine's event stream for Berth containers; the iterator ends when `signal` aborts. */
  events(signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent>;
}
