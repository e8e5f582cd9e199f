import { posix } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { AsyncQueue, BerthError, ErrorCodes, LineSplitter, ValidationError } from '@berth/core';
import type { ExecHandle, ExecSpec, SandboxInfo, SandboxPathStat, SandboxRuntime, SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';
import { CoreV1Api, CustomObjectsApi, Exec, type KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1Status } from '@kubernetes/client-node';
import { apiError, statusOf } from './api-errors';
import {
  AGENT_SANDBOX,
  BERTH_NAME_LABEL,
  exitOf,
  isSandboxObjectName,
  podPhaseOf,
  type PodObject,
  type PodEgress,
  type PodPhase,
  SANDBOX_CONTAINER,
  type SandboxObject,
  sandboxInfoOf,
  sandboxObjectName,
  sandboxResource,
} from './sandbox-resource';

export type KubernetesSandboxRuntimeOptions = Readonly<{
  kubeConfig: KubeConfig;
  namespace: string;
  /** Only sandboxes with these labels are listed in events (Berth's managed marker by default). */
  managedLabels?: Readonly<Record<string, string>>;
  /** The egress Service sandboxes reach (their only way out); null: sandboxes with an egress are refused. */
  egress?: PodEgress | null;
  /** How long a new Sandbox's pod may take to run (scheduling, image pull, volume binding); default 5 minutes. */
  startTimeoutMs?: number;
}>;

const DEFAULT_MANAGED_LABELS = { 'berth.managed': 'true' } as const;
const STDERR_TAIL = 8192;

const selectorOf = (labels: Readonly<Record<string, string>>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** The exit code of a finished exec, from the status the API server sends on the error channel. */
export function execExitCode(status: V1Status): number {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : 1;
}

/**
 * `SandboxRuntime` on Kubernetes through the `kubernetes-sigs/agent-sandbox` resources: a sandbox
 * is a `Sandbox` (`agents.x-k8s.io/v1beta1`), whose controller runs its pod; the harness runs by
 * exec in that pod (the API server's exec websocket); its facts come from the pod's phase and
 * container state, mapped to the same `SandboxInfo` and events as Docker's (`sandboxInfoOf`).
 * Files go through exec too (`cat`, `tar`, `stat` in the pod), as `kubectl cp` does. Every
 * operation is idempotent like the Docker runtime's: an existing Sandbox is kept, deleting a
 * missing one succeeds.
 */
export class KubernetesSandboxRuntime implements SandboxRuntime {
  private readonly core: CoreV1Api;
  private readonly objects: CustomObjectsApi;
  private readonly execApi: Exec;
  private readonly watch: Watch;
  private readonly namespace: string;
  private readonly managedLabels: Readonly<Record<string, string>>;
  private readonly egress: PodEgress | null;
  private readonly startTimeoutMs: number;

  constructor(options: KubernetesSandboxRuntimeOptions) {
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.objects = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.execApi = new Exec(options.kubeConfig);
    this.watch = new Watch(options.kubeConfig);
    this.namespace = options.namespace;
    this.managedLabels = options.managedLabels ?? DEFAULT_MANAGED_LABELS;
    this.egress = options.egress ?? null;
    this.startTimeoutMs = options.startTimeoutMs ?? 300_000;
  }

  async ensureRunning(spec: SandboxSpec): Promise<SandboxInfo> {
    const body = sandboxResource(spec, this.namespace, this.egress);
    const name = sandboxObjectName(spec.name);
    try {
      await this.objects.createNamespacedCustomObject({ ...this.resource(), body });
    } catch (error) {
      if (statusOf(error) !== 409) throw apiError('create sandbox', spec.name, error);
    }
    // The controller starts the pod; a Sandbox is running once its pod's container runs. A pod the
    // cluster cannot run (unschedulable, an image it cannot pull, a volume that never binds) fails
    // the start after `startTimeoutMs`, with the reason its container waits for.
    const deadline = Date.now() + this.startTimeoutMs;
    for (;;) {
      const sandbox = await this.sandboxOf(name);
      if (sandbox === null) throw apiError('inspect', spec.name, new Error('the Sandbox vanished right after create'));
      const pod = await this.podOf(sandbox);
      const info = sandboxInfoOf(sandbox, pod);
      if (info.running) return info;
      if (info.exitCode !== null) throw apiError('start', spec.name, new Error(`its pod ended with exit code ${info.exitCode}`));
      if (Date.now() > deadline) {
        const waiting = pod?.status?.containerStatuses?.find((c) => c.name === SANDBOX_CONTAINER)?.state?.waiting?.reason;
        throw apiError('start', spec.name, new Error(`its pod did not run within ${Math.round(this.startTimeoutMs / 1000)} s (${pod === null ? 'no pod yet' : `phase ${pod.status?.phase ?? 'unknown'}${waiting === undefined ? '' : `, ${waiting}`}`})`));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async inspect(nameOrId: string): Promise<SandboxInfo | null> {
    const sandbox = await this.sandboxOf(nameOrId);
    if (sandbox === null) return null;
    return sandboxInfoOf(sandbox, await this.podOf(sandbox));
  }

  /** Kubernetes has no stop that keeps a pod: a stopped sandbox is a deleted one (its facts for recovery are in the store). */
  async stop(nameOrId: string): Promise<void> {
    await this.remove(nameOrId);
  }

  async remove(nameOrId: string): Promise<void> {
    const sandbox = await this.sandboxOf(nameOrId);
    if (sandbox === null) return;
    try {
      await this.objects.deleteNamespacedCustomObject({ ...this.resource(), name: sandbox.metadata.name, propagationPolicy: 'Foreground' });
    } catch (error) {
      if (statusOf(error) !== 404) throw apiError('delete sandbox', nameOrId, error);
    }
  }

  async list(labels: Readonly<Record<string, string>>): Promise<readonly SandboxInfo[]> {
    let items: SandboxObject[];
    try {
      items = ((await this.objects.listNamespacedCustomObject({ ...this.resource(), labelSelector: selectorOf(labels) })) as { items: SandboxObject[] }).items;
    } catch (error) {
      throw apiError('list sandboxes', selectorOf(labels), error);
    }
    return Promise.all(items.map(async (s) => sandboxInfoOf(s, await this.podOf(s))));
  }

  async exec(nameOrId: string, spec: ExecSpec): Promise<ExecHandle> {
    if (spec.cmd.length === 0) throw new ValidationError('cmd must not be empty', 'cmd');
    const pod = await this.runningPod(nameOrId);
    // Kubernetes exec takes no env, workdir or user: they go through `env`/`cd` in front of the command (the pod's user stays).
    const prefix = spec.workdir !== undefined ? ['sh', '-c', 'cd "$0" && exec "$@"', spec.workdir] : [];
    const env = Object.entries(spec.env ?? {}).map(([k, v]) => `${k}=${v}`);
    const command = [...(env.length > 0 ? ['env', ...env] : []), ...prefix, ...spec.cmd];
    const stdin = new PassThrough();
    const lines = new AsyncQueue<string>();
    const splitter = new LineSplitter((line) => lines.push(line));
    let stderr = '';
    let settle: (code: number) => void = () => undefined;
    let fail: (error: unknown) => void = () => undefined;
    const exit = new Promise<number>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    const stdout = new Writable({ write: (chunk: Buffer, _e, done) => (splitter.write(chunk), done()) });
    const errors = new Writable({ write: (chunk: Buffer, _e, done) => ((stderr = (stderr + chunk.toString()).slice(-STDERR_TAIL)), done()) });
    try {
      const socket = await this.execApi.exec(this.namespace, pod, SANDBOX_CONTAINER, command, stdout, errors, stdin, false, (status) => {
        splitter.flush();
        lines.end();
        settle(execExitCode(status));
      });
      socket.on('close', () => {
        splitter.flush();
        lines.end();
        fail(apiError('exec', nameOrId, new Error('the exec stream closed without an exit status')));
      });
    } catch (error) {
      throw apiError('exec', nameOrId, error);
    }
    exit.catch(() => undefined);
    if (spec.stdin !== undefined) stdin.end(spec.stdin);
    return {
      lines,
      exit,
      write: (data) => void stdin.write(data),
      closeStdin: () => void stdin.end(),
      stderrTail: () => stderr,
    };
  }

  /** A warm claim: the Sandbox's Berth name label changes (its object name stays the hash of the name it was created with). */
  async relabel(nameOrId: string, newName: string): Promise<void> {
    if ((await this.sandboxOf(newName)) !== null) throw apiError('rename', nameOrId, new Error(`the name ${newName} is taken`));
    const sandbox = await this.sandboxOf(nameOrId);
    if (sandbox === null) throw apiError('rename', nameOrId, new Error('no such sandbox'));
    // JSON merge patches: the label named here changes, the rest stay. The pod's label too: the
    // pod watch names its events by it, and the egress finds a pod's sandbox by it.
    const patch = { metadata: { labels: { [BERTH_NAME_LABEL]: newName } } };
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    try {
      await this.objects.patchNamespacedCustomObject({ ...this.resource(), name: sandbox.metadata.name, body: patch }, merge);
    } catch (error) {
      throw apiError('rename', nameOrId, error);
    }
    const pod = await this.podOf(sandbox);
    if (pod === null) return;
    try {
      await this.core.patchNamespacedPod({ name: pod.metadata.name, namespace: this.namespace, body: patch }, merge);
    } catch (error) {
      if (statusOf(error) !== 404) throw apiError('rename pod of', nameOrId, error);
    }
  }

  async readFile(nameOrId: string, path: string): Promise<Buffer | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    const { code, out } = await this.run(nameOrId, ['sh', '-c', '[ -f "$0" ] || exit 44; exec cat -- "$0"', path]);
    if (code === 44) return null;
    if (code !== 0) throw apiError('read', `${nameOrId}:${path}`, new Error(`exit code ${code}`));
    return out;
  }

  async writeFile(nameOrId: string, path: string, data: Buffer | string, mode = 0o644): Promise<void> {
    if (!posix.isAbsolute(path) || path.endsWith('/')) throw new ValidationError('path must be an absolute file path', 'path');
    const { code, err } = await this.run(nameOrId, ['sh', '-c', 'cat > "$0" && chmod "$1" "$0"', path, mode.toString(8)], Buffer.isBuffer(data) ? data : Buffer.from(data));
    if (code !== 0) throw apiError('write', `${nameOrId}:${path}`, new Error(`exit code ${code}: ${err}`));
  }

  async putArchive(nameOrId: string, dir: string, archive: Readable): Promise<void> {
    if (!posix.isAbsolute(dir)) throw new ValidationError('dir must be absolute', 'dir');
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
    const { code, err } = await this.run(nameOrId, ['tar', '-x', '-f', '-', '-C', dir], Buffer.concat(chunks));
    if (code !== 0) throw apiError('putArchive', `${nameOrId}:${dir}`, new Error(`exit code ${code}: ${err}`));
  }

  async getArchive(nameOrId: string, path: string): Promise<Readable | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    const { code, out, err } = await this.run(nameOrId, ['sh', '-c', '[ -e "$0" ] || exit 44; exec tar -c -f - -C "$1" "$2"', path, posix.dirname(path), posix.basename(path)]);
    if (code === 44) return null;
    if (code !== 0) throw apiError('getArchive', `${nameOrId}:${path}`, new Error(`exit code ${code}: ${err}`));
    return Readable.from([out]);
  }

  async stat(nameOrId: string, path: string): Promise<SandboxPathStat | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    const { code, out } = await this.run(nameOrId, ['sh', '-c', '[ -e "$0" ] || [ -L "$0" ] || exit 44; exec stat -c "%F|%s|%Y" -- "$0"', path]);
    if (code === 44) return null;
    if (code !== 0) throw apiError('stat', `${nameOrId}:${path}`, new Error(`exit code ${code}`));
    const [type = '', size = '0', mtime = '0'] = out.toString().trim().split('|');
    const kind = type === 'directory' ? 'directory' : type === 'symbolic link' ? 'link' : type.startsWith('regular') ? 'file' : 'other';
    return { kind, size: Number(size), mtime: new Date(Number(mtime) * 1000).toISOString() };
  }

  async appendFile(nameOrId: string, path: string, data: string): Promise<void> {
    if (!posix.isAbsolute(path) || path.endsWith('/')) throw new ValidationError('path must be an absolute file path', 'path');
    const { code, err } = await this.run(nameOrId, ['sh', '-c', 'cat >> "$0"', path], Buffer.from(data));
    if (code !== 0) throw apiError('append', `${nameOrId}:${path}`, new Error(`exit code ${code}: ${err}`));
  }

  /**
   * Pod watch for Berth's sandboxes, turned into Docker's events: a pod whose container starts
   * running is `start`, one whose container terminated is `oom` (when OOM-killed) then `die` with
   * its exit code, a deleted pod is `destroy`. A dropped watch is re-opened; the first listing after
   * it reports only changes against what was seen before.
   */
  events(signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent> {
    const queue = new AsyncQueue<SandboxRuntimeEvent>();
    const seen = new Map<string, PodPhase>();
    const emit = (kind: SandboxRuntimeEvent['kind'], pod: PodObject) => {
      const labels = { ...(pod.metadata.labels ?? {}) };
      // A cold Sandbox's pod has its name: the id `inspect` reports.
      queue.push({ kind, containerId: pod.metadata.name, name: labels[BERTH_NAME_LABEL] ?? pod.metadata.name, labels, exitCode: exitOf(pod).exitCode, at: new Date().toISOString() });
    };
    const observe = (type: string, pod: PodObject) => {
      const key = pod.metadata.uid ?? pod.metadata.name;
      if (type === 'DELETED') {
        seen.delete(key);
        emit('destroy', pod);
        return;
      }
      const phase = podPhaseOf(pod);
      const before = seen.get(key);
      seen.set(key, phase);
      if (phase === before) return;
      if (phase === 'running') emit('start', pod);
      if (phase === 'terminated') {
        if (exitOf(pod).oomKilled) emit('oom', pod);
        emit('die', pod);
      }
    };
    const follow = async () => {
      while (!signal.aborted) {
        const ended = new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => resolve(), { once: true });
          void this.watch
            .watch(`/api/v1/namespaces/${this.namespace}/pods`, { labelSelector: selectorOf(this.managedLabels) }, (type, pod: PodObject) => observe(type, pod), () => resolve())
            .then((request) => (signal.aborted ? request.abort() : signal.addEventListener('abort', () => request.abort(), { once: true })), () => resolve());
        });
        await ended;
        if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      queue.end();
    };
    void follow();
    return queue;
  }

  private resource() {
    return { group: AGENT_SANDBOX.group, version: AGENT_SANDBOX.version, namespace: this.namespace, plural: AGENT_SANDBOX.plural };
  }

  /** The Sandbox by object name, else by its Berth name label. */
  private async sandboxOf(nameOrId: string): Promise<SandboxObject | null> {
    if (isSandboxObjectName(nameOrId)) {
      try {
        return (await this.objects.getNamespacedCustomObject({ ...this.resource(), name: nameOrId })) as SandboxObject;
      } catch (error) {
        if (statusOf(error) === 404) return null;
        throw apiError('get sandbox', nameOrId, error);
      }
    }
    let items: SandboxObject[];
    try {
      items = ((await this.objects.listNamespacedCustomObject({ ...this.resource(), labelSelector: `${BERTH_NAME_LABEL}=${nameOrId}` })) as { items: SandboxObject[] }).items;
    } catch (error) {
      throw apiError('find sandbox', nameOrId, error);
    }
    return items.find((s) => s.metadata.deletionTimestamp === undefined) ?? null;
  }

  /** Its pod: named after the Sandbox, or the warm pod it adopted (the controller's annotation). */
  private async podOf(sandbox: SandboxObject): Promise<PodObject | null> {
    const name = sandbox.metadata.annotations?.['agents.x-k8s.io/pod-name'] ?? sandbox.metadata.name;
    try {
      return (await this.core.readNamespacedPod({ name, namespace: this.namespace })) as PodObject;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw apiError('get pod', name, error);
    }
  }

  private async runningPod(nameOrId: string): Promise<string> {
    const sandbox = await this.sandboxOf(nameOrId);
    const pod = sandbox === null ? null : await this.podOf(sandbox);
    if (sandbox === null || pod === null) throw new BerthError(ErrorCodes.NOT_FOUND, 404, `no sandbox ${nameOrId} in namespace ${this.namespace}`, { target: nameOrId });
    return pod.metadata.name;
  }

  /** Runs a command in the pod with `input` on stdin; its whole stdout, stderr tail and exit code. */
  private async run(nameOrId: string, cmd: readonly string[], input?: Buffer): Promise<{ code: number; out: Buffer; err: string }> {
    const pod = await this.runningPod(nameOrId);
    const out: Buffer[] = [];
    let err = '';
    const stdin = input === undefined ? null : Readable.from([input]);
    const code = await new Promise<number>((resolve, reject) => {
      this.execApi
        .exec(
          this.namespace,
          pod,
          SANDBOX_CONTAINER,
          [...cmd],
          new Writable({ write: (chunk: Buffer, _e, done) => (out.push(chunk), done()) }),
          new Writable({ write: (chunk: Buffer, _e, done) => ((err = (err + chunk.toString()).slice(-STDERR_TAIL)), done()) }),
          stdin,
          false,
          (status) => resolve(execExitCode(status)),
        )
        .then((socket) => socket.on('close', () => reject(apiError('exec', nameOrId, new Error('the exec stream closed without an exit status')))), reject);
    });
    return { code, out: Buffer.concat(out), err };
  }
}
