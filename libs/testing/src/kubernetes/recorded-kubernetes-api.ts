import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RecordedApiRequest } from './rbac-check';

/**
 * A stand-in for a Kubernetes API server with the `kubernetes-sigs/agent-sandbox` controller, for
 * the runtime contract suite where no real API server can run (none here: no kind, k3s or
 * kube-apiserver package, no image registry). It answers the calls a Kubernetes sandbox runtime
 * makes, in the shapes the real API uses (recorded from the API reference and the agent-sandbox
 * types at v1beta1): `Sandbox` create/get/list/merge-patch/delete, pod get and watch (JSON lines),
 * and pod exec over the websocket (`v5.channel.k8s.io`: channel 0 stdin, 1 stdout, 2 stderr,
 * 3 the final `Status`, 255 close-stdin). Its "kubelet" runs each Sandbox's pod as a container
 * on a Docker engine (network none, the pod's user, command, env and limits), so exec and files
 * are real. Also answered: PersistentVolumeClaims (each a Docker volume the pods mount, owned by
 * the pod's fsGroup as the kubelet would make it), ConfigMaps (a pod mounting one waits for it,
 * then gets its files read-only), NetworkPolicies (stored, for the
 * test to read: not enforced), Services the test adds, pod label patches, and pods found by
 * `status.podIP`. With `podNetwork` the pods join that Docker network (their IP is the pod IP);
 * without, they have none. What it is not: admission, RBAC, scheduling, NetworkPolicy
 * enforcement, resourceVersion semantics.
 */
export class RecordedKubernetesApi {
  /** Every call answered, as `METHOD path` (query left off): what the runtime asked of the API. */
  readonly calls: string[] = [];
  /** The same calls with what an authorizer looks at: the bearer token, watch, websocket. */
  readonly requests: RecordedApiRequest[] = [];
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly pods = new Map<string, Pod>();
  private readonly watchers = new Set<{ selector: Record<string, string>; res: ServerResponse }>();
  private readonly run = randomBytes(4).toString('hex');
  private server: Server | null = null;
  private readonly sockets = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
  private readonly watching = new AbortController();
  private version = 1;
  /** Objects of the core kinds kept as they were sent (by kind, then namespace/name). */
  private readonly stored = new Map<string, Map<string, StoredObject>>();
  /** Pods waiting for a ConfigMap they mount (the kubelet holds a pod in ContainerCreating until it exists). */
  private readonly configMapWaiters = new Map<string, (() => void)[]>();
  private readonly filesDir = mkdtempSync(join(tmpdir(), 'berth-k8s-standin-'));

  constructor(
    private readonly docker: Docker,
    private readonly namespace = 'berth',
    private readonly options: Readonly<{ podNetwork?: string }> = {},
  ) {}

  /** A Service as the cluster would have it (the test's egress), in any namespace. */
  addService(namespace: string, service: Readonly<{ name: string; clusterIP: string; port: number; targetPort: number; selector: Readonly<Record<string, string>> }>): void {
    this.put('services', namespace, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service.name, namespace },
      spec: { clusterIP: service.clusterIP, selector: { ...service.selector }, ports: [{ protocol: 'TCP', port: service.port, targetPort: service.targetPort }] },
    });
  }

  /** The objects of a kind (`networkpolicies`, `persistentvolumeclaims`, `configmaps`) in a namespace, as stored. */
  objectsOf(plural: string, namespace = this.namespace): readonly StoredObject[] {
    return [...(this.stored.get(plural)?.values() ?? [])].filter((o) => o.metadata.namespace === namespace);
  }

  /** The pods it runs now (their IPs, labels and owners, as the API would report them). */
  objectsOfPods(): readonly Pod[] {
    return [...this.pods.values()];
  }

  private put(plural: string, namespace: string, object: StoredObject): StoredObject {
    const kind = this.stored.get(plural) ?? new Map<string, StoredObject>();
    this.stored.set(plural, kind);
    // The API server stamps an object's creation once (a replace carries it over, as it does the uid).
    const created = object.metadata.creationTimestamp ?? new Date().toISOString();
    const stored = { ...object, metadata: { ...object.metadata, namespace, uid: object.metadata.uid ?? randomBytes(16).toString('hex'), resourceVersion: String(++this.version), creationTimestamp: created } };
    kind.set(`${namespace}/${object.metadata.name}`, stored);
    if (plural === 'configmaps') for (const wake of this.configMapWaiters.get(`${namespace}/${object.metadata.name}`)?.splice(0) ?? []) wake();
    return stored;
  }

  /** A ConfigMap's files on the host, for a pod to mount read-only; waits until the ConfigMap exists. */
  private async configMapFiles(podName: string, volume: string, name: string): Promise<string> {
    const key = `${this.namespace}/${name}`;
    while (!this.stored.get('configmaps')?.has(key)) {
      await new Promise<void>((resolve) => this.configMapWaiters.set(key, [...(this.configMapWaiters.get(key) ?? []), resolve]));
    }
    const data = (this.stored.get('configmaps')?.get(key)?.['data'] ?? {}) as Record<string, string>;
    const dir = join(this.filesDir, podName, volume);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    for (const [file, content] of Object.entries(data)) writeFileSync(join(dir, file), content, { mode: 0o644 });
    return dir;
  }

  /** The label on every backing container (teardown removes them). */
  get backingLabel(): Readonly<Record<string, string>> {
    return { 'berth.k8s-standin': this.run };
  }

  /** The API server's address once started. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the stand-in is not started');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.answer(req, res).catch((error: unknown) => this.status(res, 500, 'InternalError', String(error))));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    void this.followKubelet();
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The backing container of a pod (a test kills it to see the runtime report the pod's end). */
  containerOf(podName: string): string {
    return `k8s-${this.run}-${podName}`;
  }

  async close(): Promise<void> {
    this.watching.abort();
    for (const w of this.watchers) w.res.end();
    for (const client of this.sockets.clients) client.terminate();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    const backing = await this.docker.listContainers({ all: true, filters: { label: [`berth.k8s-standin=${this.run}`] } });
    await Promise.all(backing.map((c) => this.docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
    rmSync(this.filesDir, { recursive: true, force: true });
    const volumes = (await this.docker.listVolumes({ filters: JSON.stringify({ label: [`berth.k8s-standin=${this.run}`] }) })).Volumes ?? [];
    await Promise.all(volumes.map((v) => this.docker.getVolume(v.Name).remove().catch(() => undefined)));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://api');
    this.calls.push(`${req.method} ${url.pathname}`);
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, watch: url.searchParams.get('watch') === 'true', websocket: false, token: bearerOf(req) });
    const sandboxPath = url.pathname.match(/^\/apis\/agents\.x-k8s\.io\/v1beta1\/namespaces\/([^/]+)\/sandboxes(?:\/([^/]+))?$/);
    const podPath = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/);
    const corePath = url.pathname.match(/^\/(?:api\/v1|apis\/networking\.k8s\.io\/v1)\/namespaces\/([^/]+)\/(persistentvolumeclaims|configmaps|networkpolicies|services)(?:\/([^/]+))?$/);
    if (corePath?.[2] === 'services') return this.objectCall(req, res, url, 'services', corePath[1] as string, corePath[3]);
    const namespace = sandboxPath?.[1] ?? podPath?.[1] ?? corePath?.[1];
    if (namespace !== undefined && namespace !== this.namespace) return this.status(res, 404, 'NotFound', `namespaces "${namespace}" not found`);
    if (sandboxPath) return this.sandboxCall(req, res, url, sandboxPath[2]);
    if (podPath) return this.podCall(req, res, url, podPath[2]);
    if (corePath) return this.objectCall(req, res, url, corePath[2] as string, corePath[1] as string, corePath[3]);
    return this.status(res, 404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
  }

  private async sandboxCall(req: IncomingMessage, res: ServerResponse, url: URL, name: string | undefined): Promise<void> {
    if (name === undefined && req.method === 'GET') {
      const selector = parseSelector(url.searchParams.get('labelSelector'));
      const items = [...this.sandboxes.values()].filter((s) => matches(s.metadata.labels, selector));
      return this.json(res, 200, { apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'SandboxList', metadata: { resourceVersion: String(this.version) }, items });
    }
    if (name === undefined && req.method === 'POST') {
      const body = (await readJson(req)) as Sandbox;
      const objectName = body.metadata?.name;
      if (!objectName) return this.status(res, 422, 'Invalid', 'Sandbox.agents.x-k8s.io "" is invalid: metadata.name: Required value');
      if (this.sandboxes.has(objectName)) return this.status(res, 409, 'AlreadyExists', `sandboxes.agents.x-k8s.io "${objectName}" already exists`);
      const sandbox: Sandbox = { ...body, metadata: { ...body.metadata, namespace: this.namespace, uid: randomBytes(16).toString('hex'), resourceVersion: String(++this.version), creationTimestamp: new Date().toISOString() }, status: {} };
      this.sandboxes.set(objectName, sandbox);
      this.json(res, 201, sandbox);
      await this.startPod(sandbox);
      return;
    }
    const sandbox = name === undefined ? undefined : this.sandboxes.get(name);
    if (sandbox === undefined) return this.status(res, 404, 'NotFound', `sandboxes.agents.x-k8s.io "${name}" not found`);
    if (req.method === 'GET') return this.json(res, 200, sandbox);
    if (req.method === 'PATCH') {
      if (!String(req.headers['content-type']).startsWith('application/merge-patch+json')) return this.status(res, 415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/merge-patch+json (got ${req.headers['content-type']})`);
      const patch = (await readJson(req)) as { metadata?: { labels?: Record<string, string> } };
      sandbox.metadata.labels = { ...sandbox.metadata.labels, ...patch.metadata?.labels };
      sandbox.metadata.resourceVersion = String(++this.version);
      return this.json(res, 200, sandbox);
    }
    if (req.method === 'DELETE') {
      this.sandboxes.delete(sandbox.metadata.name);
      await this.deletePod(sandbox.metadata.name);
      return this.json(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: sandbox.metadata.name, group: 'agents.x-k8s.io', kind: 'sandboxes', uid: sandbox.metadata.uid } });
    }
    return this.status(res, 405, 'MethodNotAllowed', `${req.method} is not supported`);
  }

  /** PVCs, ConfigMaps, NetworkPolicies, Services: create (409 on a taken name), get, list by labels, replace, delete. */
  private async objectCall(req: IncomingMessage, res: ServerResponse, url: URL, plural: string, namespace: string, name: string | undefined): Promise<void> {
    const kind = this.stored.get(plural) ?? new Map<string, StoredObject>();
    if (name === undefined && req.method === 'GET') {
      const selector = parseSelector(url.searchParams.get('labelSelector'));
      return this.json(res, 200, { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: String(this.version) }, items: this.objectsOf(plural, namespace).filter((o) => matches(o.metadata.labels, selector)) });
    }
    if (name === undefined && req.method === 'POST') {
      const body = (await readJson(req)) as StoredObject;
      if (!body.metadata?.name) return this.status(res, 422, 'Invalid', `${plural} "" is invalid: metadata.name: Required value`);
      if (kind.has(`${namespace}/${body.metadata.name}`)) return this.status(res, 409, 'AlreadyExists', `${plural} "${body.metadata.name}" already exists`);
      if (plural === 'persistentvolumeclaims') await this.docker.createVolume({ Name: this.volumeOf(body.metadata.name), Labels: { ...this.backingLabel } });
      return this.json(res, 201, this.put(plural, namespace, body));
    }
    const object = kind.get(`${namespace}/${name}`);
    if (object === undefined) return this.status(res, 404, 'NotFound', `${plural} "${name}" not found`);
    if (req.method === 'GET') return this.json(res, 200, object);
    if (req.method === 'PUT') {
      const body = (await readJson(req)) as StoredObject;
      return this.json(res, 200, this.put(plural, namespace, { ...body, metadata: { ...body.metadata, uid: object.metadata.uid, creationTimestamp: object.metadata.creationTimestamp } }));
    }
    if (req.method === 'DELETE') {
      kind.delete(`${namespace}/${name}`);
      if (plural === 'persistentvolumeclaims') await this.docker.getVolume(this.volumeOf(object.metadata.name)).remove().catch(() => undefined);
      return this.json(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: plural } });
    }
    return this.status(res, 405, 'MethodNotAllowed', `${req.method} is not supported`);
  }

  /** The Docker volume standing in for a PersistentVolumeClaim. */
  volumeOf(claimName: string): string {
    return `k8s-${this.run}-${claimName}`;
  }

  private async podCall(req: IncomingMessage, res: ServerResponse, url: URL, name: string | undefined): Promise<void> {
    if (req.method === 'PATCH' && name !== undefined) {
      const pod = this.pods.get(name);
      if (pod === undefined) return this.status(res, 404, 'NotFound', `pods "${name}" not found`);
      if (!String(req.headers['content-type']).startsWith('application/merge-patch+json')) return this.status(res, 415, 'UnsupportedMediaType', `got ${req.headers['content-type']}`);
      const patch = (await readJson(req)) as { metadata?: { labels?: Record<string, string> } };
      pod.metadata.labels = { ...pod.metadata.labels, ...patch.metadata?.labels };
      pod.metadata.resourceVersion = String(++this.version);
      this.notify('MODIFIED', pod);
      return this.json(res, 200, pod);
    }
    if (req.method !== 'GET') return this.status(res, 405, 'MethodNotAllowed', `${req.method} is not supported here`);
    if (name !== undefined) {
      const pod = this.pods.get(name);
      return pod === undefined ? this.status(res, 404, 'NotFound', `pods "${name}" not found`) : this.json(res, 200, pod);
    }
    const selector = parseSelector(url.searchParams.get('labelSelector'));
    if (url.searchParams.get('watch') !== 'true') {
      const podIp = /^status\.podIP=(.+)$/.exec(url.searchParams.get('fieldSelector') ?? '')?.[1];
      const items = [...this.pods.values()].filter((p) => matches(p.metadata.labels, selector) && (podIp === undefined || p.status.podIP === podIp));
      return this.json(res, 200, { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: String(this.version) }, items });
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const watcher = { selector, res };
    this.watchers.add(watcher);
    req.on('close', () => this.watchers.delete(watcher));
    // A watch without a resourceVersion starts with every matching object as ADDED.
    for (const pod of this.pods.values()) if (matches(pod.metadata.labels, selector)) res.write(`${JSON.stringify({ type: 'ADDED', object: pod })}\n`);
  }

  private notify(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod): void {
    for (const w of this.watchers) if (matches(pod.metadata.labels, w.selector)) w.res.write(`${JSON.stringify({ type, object: pod })}\n`);
  }

  /** The controller and kubelet: a pod named after the Sandbox, owned by it, run as a container. */
  private async startPod(sandbox: Sandbox): Promise<void> {
    const template = sandbox.spec.podTemplate;
    const container = template.spec.containers[0] as PodContainer;
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: sandbox.metadata.name,
        namespace: this.namespace,
        uid: randomBytes(16).toString('hex'),
        labels: { ...template.metadata?.labels },
        resourceVersion: String(++this.version),
        ownerReferences: [{ apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'Sandbox', name: sandbox.metadata.name, uid: sandbox.metadata.uid, controller: true }],
      },
      spec: template.spec,
      status: { phase: 'Pending', containerStatuses: [{ name: container.name, state: { waiting: { reason: 'ContainerCreating' } } }] },
    };
    this.pods.set(pod.metadata.name, pod);
    this.notify('ADDED', pod);
    const security = template.spec.securityContext ?? {};
    const limits = container.resources?.limits ?? {};
    const volumes = new Map((template.spec.volumes ?? []).map((v) => [v.name, v]));
    const mounts = (container.volumeMounts ?? []).map((m) => ({ ...m, claim: volumes.get(m.name)?.persistentVolumeClaim?.claimName, configMap: volumes.get(m.name)?.configMap?.name }));
    const claims = mounts.filter((m) => m.claim !== undefined);
    const binds: string[] = [];
    for (const m of mounts) if (m.configMap !== undefined) binds.push(`${await this.configMapFiles(pod.metadata.name, m.name, m.configMap)}:${m.mountPath}:ro`);
    if (claims.length > 0) await this.ownClaims(container.image, claims.map((m) => this.volumeOf(m.claim as string)), `${security.fsGroup ?? security.runAsUser}`, `${security.fsGroup ?? security.runAsGroup}`);
    const created = await this.docker.createContainer({
      name: this.containerOf(pod.metadata.name),
      Image: container.image,
      Cmd: container.command,
      Env: (container.env ?? []).map((e) => `${e.name}=${e.value}`),
      WorkingDir: container.workingDir,
      User: `${security.runAsUser}:${security.runAsGroup}`,
      Labels: { ...this.backingLabel, 'berth.k8s-pod': pod.metadata.name },
      HostConfig: {
        NetworkMode: this.options.podNetwork ?? 'none',
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Memory: Number(limits['memory'] ?? 0),
        NanoCpus: Math.round(Number(String(limits['cpu'] ?? '0').replace(/m$/, '')) * 1e6),
        ReadonlyRootfs: container.securityContext?.readOnlyRootFilesystem === true,
        Tmpfs: Object.fromEntries(mounts.filter((m) => m.claim === undefined && m.configMap === undefined).map((m) => [m.mountPath, `rw,uid=${security.runAsUser},gid=${security.runAsGroup}`])),
        Binds: binds,
        Mounts: claims.map((m) => ({ Type: 'volume' as const, Source: this.volumeOf(m.claim as string), Target: m.mountPath, ReadOnly: m.readOnly === true })),
      },
    });
    await created.start();
    const info = await created.inspect();
    const podIP = this.options.podNetwork === undefined ? undefined : info.NetworkSettings.Networks[this.options.podNetwork]?.IPAddress;
    pod.status = { phase: 'Running', podIP, containerStatuses: [{ name: container.name, state: { running: { startedAt: info.State.StartedAt } } }] };
    pod.metadata.resourceVersion = String(++this.version);
    this.notify('MODIFIED', pod);
  }

  /** The kubelet's fsGroup: a claim's volume root belongs to the pod's group before the pod starts. */
  private async ownClaims(image: string, volumes: readonly string[], uid: string, gid: string): Promise<void> {
    const helper = await this.docker.createContainer({
      Image: image,
      User: '0:0',
      Cmd: ['chown', `${uid}:${gid}`, ...volumes.map((_, i) => `/v${i}`)],
      Labels: { ...this.backingLabel },
      HostConfig: { NetworkMode: 'none', Mounts: volumes.map((v, i) => ({ Type: 'volume' as const, Source: v, Target: `/v${i}` })) },
    });
    try {
      await helper.start();
      await helper.wait();
    } finally {
      await helper.remove({ force: true }).catch(() => undefined);
    }
  }

  private async deletePod(name: string): Promise<void> {
    const pod = this.pods.get(name);
    if (pod === undefined) return;
    this.pods.delete(name);
    await this.docker.getContainer(this.containerOf(name)).remove({ force: true, v: true }).catch(() => undefined);
    this.notify('DELETED', pod);
  }

  /** The kubelet's report of a container that ended: the pod becomes Failed/Succeeded with its exit code. */
  private async followKubelet(): Promise<void> {
    let stream: NodeJS.ReadableStream;
    try {
      stream = (await this.docker.getEvents({ filters: { type: ['container'], event: ['die', 'oom'], label: [`berth.k8s-standin=${this.run}`] }, abortSignal: this.watching.signal } as Docker.GetEventsOptions)) as NodeJS.ReadableStream;
    } catch {
      return;
    }
    const oomed = new Set<string>();
    let partial = '';
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        const event = JSON.parse(line) as { Action?: string; Actor?: { Attributes?: Record<string, string> } };
        const podName = event.Actor?.Attributes?.['berth.k8s-pod'];
        const pod = podName === undefined ? undefined : this.pods.get(podName);
        if (pod === undefined || podName === undefined) continue;
        if (event.Action === 'oom') {
          oomed.add(podName);
          continue;
        }
        const exitCode = Number(event.Actor?.Attributes?.['exitCode'] ?? 1);
        const startedAt = pod.status.containerStatuses[0]?.state.running?.startedAt;
        pod.status = {
          phase: exitCode === 0 ? 'Succeeded' : 'Failed',
          containerStatuses: [{ name: pod.status.containerStatuses[0]?.name ?? 'sandbox', state: { terminated: { exitCode, reason: oomed.has(podName) ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error', startedAt, finishedAt: new Date().toISOString() } } }],
        };
        pod.metadata.resourceVersion = String(++this.version);
        this.notify('MODIFIED', pod);
      }
    });
  }

  /** `GET …/pods/{name}/exec?command=…` upgraded to a websocket: the command runs in the pod's container. */
  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://api');
    this.calls.push(`${req.method} ${url.pathname} (websocket)`);
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, watch: false, websocket: true, token: bearerOf(req) });
    const match = url.pathname.match(/^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/);
    const pod = match?.[1] === this.namespace && match[2] !== undefined ? this.pods.get(match[2]) : undefined;
    if (pod === undefined || pod.status.phase !== 'Running') {
      socket.end(`HTTP/1.1 ${pod === undefined ? 404 : 400} ${pod === undefined ? 'Not Found' : 'Bad Request'}\r\n\r\n`);
      return;
    }
    const command = url.searchParams.getAll('command');
    this.sockets.handleUpgrade(req, socket, head, (ws) => void this.exec(ws, pod, command, url.searchParams.get('stdin') === 'true'));
  }

  private async exec(ws: WebSocket, pod: Pod, command: string[], withStdin: boolean): Promise<void> {
    const send = (channel: number, data: Buffer | string) => ws.readyState === ws.OPEN && ws.send(Buffer.concat([Buffer.from([channel]), Buffer.isBuffer(data) ? data : Buffer.from(data)]));
    // The client sends stdin as soon as the socket opens: hold it until the exec is attached.
    const early: Buffer[] = [];
    let toExec: ((data: Buffer) => void) | null = null;
    ws.on('message', (data: Buffer) => (toExec === null ? early.push(data) : toExec(data)));
    const container = this.docker.getContainer(this.containerOf(pod.metadata.name));
    const exec = await container.exec({ Cmd: command, AttachStdin: withStdin, AttachStdout: true, AttachStderr: true, Tty: false });
    const stream = (await exec.start({ hijack: true, stdin: withStdin, Tty: false })) as unknown as Duplex;
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (chunk: Buffer) => send(1, chunk));
    stderr.on('data', (chunk: Buffer) => send(2, chunk));
    this.docker.modem.demuxStream(stream, stdout, stderr);
    toExec = (data: Buffer) => {
      if (data[0] === 0) stream.write(data.subarray(1));
      else if (data[0] === 255 && data[1] === 0) stream.end();
    };
    for (const data of early.splice(0)) toExec(data);
    stream.on('close', () => void finish());
    stream.on('end', () => void finish());
    let finished = false;
    const finish = async () => {
      if (finished) return;
      finished = true;
      const code = (await exec.inspect()).ExitCode ?? 1;
      send(
        3,
        JSON.stringify(
          code === 0
            ? { metadata: {}, status: 'Success' }
            : { metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`, reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(code) }] } },
        ),
      );
      ws.close(1000);
    };
  }

  private json(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private status(res: ServerResponse, code: number, reason: string, message: string): void {
    this.json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
  }
}

type Labels = Record<string, string>;
type PodContainer = {
  name: string;
  image: string;
  command: string[];
  env?: { name: string; value: string }[];
  workingDir?: string;
  resources?: { limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
};
type PodSpec = {
  containers: PodContainer[];
  securityContext?: { runAsUser?: number; runAsGroup?: number; fsGroup?: number };
  volumes?: { name: string; persistentVolumeClaim?: { claimName: string }; configMap?: { name: string } }[];
};
type StoredObject = { apiVersion?: string; kind?: string; metadata: { name: string; namespace?: string; uid?: string; labels?: Labels; resourceVersion?: string; creationTimestamp?: string }; [field: string]: unknown };
type Sandbox = {
  metadata: { name: string; namespace?: string; uid?: string; labels?: Labels; resourceVersion?: string; creationTimestamp?: string };
  spec: { podTemplate: { metadata?: { labels?: Labels }; spec: PodSpec } };
  status?: Record<string, unknown>;
};
type ContainerState = { running?: { startedAt?: string }; terminated?: { exitCode: number; reason: string; startedAt?: string; finishedAt: string }; waiting?: { reason: string } };
export type Pod = {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; namespace: string; uid: string; labels: Labels; resourceVersion: string; ownerReferences: { apiVersion: string; kind: string; name: string; uid?: string; controller: boolean }[] };
  spec: PodSpec;
  status: { phase: string; podIP?: string; containerStatuses: { name: string; state: ContainerState }[] };
};

const bearerOf = (req: IncomingMessage): string | null => /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;

function parseSelector(raw: string | null): Labels {
  if (raw === null || raw === '') return {};
  return Object.fromEntries(raw.split(',').map((term) => term.split('=') as [string, string]));
}

function matches(labels: Labels | undefined, selector: Labels): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
