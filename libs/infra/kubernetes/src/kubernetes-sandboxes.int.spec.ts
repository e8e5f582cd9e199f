import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import Docker from 'dockerode';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the recorded API lives in the testing library
import { ensureDockerTestEngine, freePort, RecordedKubernetesApi } from '@berth/testing';
import { ClaimWorkspaces } from './claim-workspaces';
import { KubernetesSandboxRuntime } from './kubernetes-sandbox-runtime';
import { openKubernetesSandboxes } from './kubernetes-sandboxes';
import { PodSandboxNames } from './pod-sandbox-names';
import { SANDBOX_NETWORK_POLICY } from './sandbox-network-policy';

jest.setTimeout(90_000);

/**
 * The manager's Kubernetes set-up, workspace claims and the egress's pod identities, against a
 * RECORDED-API STAND-IN, not a real API server (none can run here): start-up refusals an operator
 * can act on, the NetworkPolicy applied (created, then replaced), workspaces as
 * PersistentVolumeClaims with compare-and-set adoption, and a pod IP resolved to its sandbox's
 * Berth name through its owning Sandbox.
 */
const STANDIN = 'against a RECORDED-API STAND-IN, not a real API server';
const NS = 'berth-sandboxes';
const engine = ensureDockerTestEngine();
const docker = new Docker({ socketPath: engine.dockerHost.replace(/^unix:\/\//, '') });
let api: RecordedKubernetesApi;
let dir: string;
let network: string;
const kubeconfigFor = (server: string, name = 'kubeconfig') => {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
  );
  return path;
};
const options = (over: Partial<Parameters<typeof openKubernetesSandboxes>[0]> = {}) => ({
  kubeconfig: kubeconfigFor(api.url),
  namespace: NS,
  egressService: 'berth/egress',
  storageClass: null,
  managedLabels: { 'berth.managed': 'true', 'berth.scope': 'int' },
  scopeLabels: { 'berth.scope': 'int' },
  ...over,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'berth-k8s-int-'));
  network = `berth-k8s-int-${process.pid}`;
  await docker.createNetwork({ Name: network, Internal: true });
  api = new RecordedKubernetesApi(docker, NS, { podNetwork: network });
  await api.start();
  api.addService('berth', { name: 'egress', clusterIP: '10.96.0.12', port: 3128, targetPort: 8128, selector: { 'app.kubernetes.io/name': 'egress' } });
  api.addService('berth', { name: 'headless', clusterIP: 'None', port: 3128, targetPort: 3128, selector: { app: 'x' } });
  api.addService('berth', { name: 'unselected', clusterIP: '10.96.0.13', port: 3128, targetPort: 3128, selector: {} });
});
afterAll(async () => {
  await api?.close();
  await docker.getNetwork(network).remove().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe(`the manager's Kubernetes set-up, ${STANDIN}`, () => {
  it.each([
    ['a kubeconfig that is not there', () => ({ kubeconfig: join(dir, 'missing') }), /BERTH_K8S_KUBECONFIG: no file/],
    ['in-cluster outside a pod', () => ({ kubeconfig: 'in-cluster' }), /BERTH_K8S_KUBECONFIG=in-cluster, but this process does not run in a pod/],
    ['a namespace without agent-sandbox Sandboxes', () => ({ namespace: 'elsewhere' }), /serves no sandboxes\.agents\.x-k8s\.io\/v1beta1 in namespace elsewhere: install the kubernetes-sigs\/agent-sandbox CRDs/],
    ['an egress Service that does not exist', () => ({ egressService: 'berth/nope' }), /BERTH_K8S_EGRESS_SERVICE: no Service nope in namespace berth/],
    ['a headless egress Service', () => ({ egressService: 'berth/headless' }), /has no cluster IP \(a headless Service\)/],
    ['an egress Service that selects no pods', () => ({ egressService: 'berth/unselected' }), /has no pod selector/],
  ])('refuses %s with a message naming what to fix', async (_what, over, message) => {
    const saved = process.env['KUBERNETES_SERVICE_HOST'];
    delete process.env['KUBERNETES_SERVICE_HOST'];
    try {
      await expect(openKubernetesSandboxes(options(over()))).rejects.toThrow(message);
    } finally {
      if (saved !== undefined) process.env['KUBERNETES_SERVICE_HOST'] = saved;
    }
  });

  it('refuses an API server it cannot reach, naming its address', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(openKubernetesSandboxes(options({ kubeconfig: kubeconfigFor(closed, 'closed') }))).rejects.toThrow(`cannot reach the API server at ${closed}`);
  });

  it('gives pods the egress Service\'s cluster IP and port, and applies the NetworkPolicy to its target port (created, then replaced on the next start)', async () => {
    const first = await openKubernetesSandboxes(options());
    expect(first.egress).toEqual({ host: '10.96.0.12', port: 3128 });
    await openKubernetesSandboxes(options());
    const policy = api.objectsOf('networkpolicies').find((p) => p.metadata.name === SANDBOX_NETWORK_POLICY) as unknown as { spec: { egress: { ports: unknown[] }[]; podSelector: unknown } };
    expect(policy.spec.egress[0]?.ports).toEqual([{ protocol: 'TCP', port: 8128 }]);
    expect(policy.spec.podSelector).toEqual({ matchLabels: { 'berth.managed': 'true', 'berth.scope': 'int' } });
    expect(api.calls.filter((c) => c.includes('networkpolicies'))).toEqual([
      `POST /apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`,
      `POST /apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies`,
      `PUT /apis/networking.k8s.io/v1/namespaces/${NS}/networkpolicies/${SANDBOX_NETWORK_POLICY}`,
    ]);
  });
});

describe(`workspaces as PersistentVolumeClaims, ${STANDIN}`, () => {
  const kc = () => {
    const config = new KubeConfig();
    config.loadFromFile(kubeconfigFor(api.url));
    return config;
  };
  const workspaces = () => new ClaimWorkspaces({ kubeConfig: kc(), namespace: NS, storageClass: 'fast', scopeLabels: { 'berth.scope': 'int' } });

  it('gives a session one workspace, two claims of its limit, the same on every call', async () => {
    const ws = workspaces();
    expect(await ws.ofSession('sesn_claims1')).toBeNull();
    const made = await ws.forSession('sesn_claims1', 64 * 1024 * 1024);
    expect(await ws.forSession('sesn_claims1', 64 * 1024 * 1024)).toEqual(made);
    expect(await ws.ofSession('sesn_claims1')).toEqual(made);
    expect(made.mounts.map((m) => [m.type, m.target])).toEqual([
      ['volume', '/workspace'],
      ['volume', '/mnt/session'],
    ]);
    const claims = api.objectsOf('persistentvolumeclaims').filter((c) => made.mounts.some((m) => m.source === c.metadata.name)) as unknown as { spec: unknown; metadata: { labels: Record<string, string> } }[];
    expect(claims).toHaveLength(2);
    for (const claim of claims) {
      expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: String(64 * 1024 * 1024) } }, storageClassName: 'fast' });
      expect(claim.metadata.labels).toMatchObject({ 'berth.managed': 'true', 'berth.scope': 'int', 'berth.workspace': made.id });
    }
  });

  it('lets one of many racing adoptions win, and a session keeps the first workspace it adopted', async () => {
    const ws = workspaces();
    const spares = await Promise.all([1, 2, 3, 4, 5, 6].map(() => ws.createSpare(1024 * 1024)));
    const won = await Promise.all(spares.map((s) => ws.adopt('sesn_race', s.id)));
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = spares[won.indexOf(true)];
    expect((await ws.ofSession('sesn_race'))?.id).toBe(winner?.id);
    const listed = await ws.spares();
    // When each was made: the claims' creation, which the start-up reconcile's grace period counts from.
    for (const spare of listed) expect(Date.parse(spare.madeAt)).not.toBeNaN();
    const left = listed.map((s) => s.id);
    expect(left).not.toContain(winner?.id);
    for (const spare of spares) if (spare !== winner) expect(left).toContain(spare.id);
    for (const spare of spares) if (spare !== winner) await ws.removeSpare(spare.id);
    await ws.removeSession('sesn_race');
    expect(await ws.ofSession('sesn_race')).toBeNull();
    const names = api.objectsOf('persistentvolumeclaims').map((c) => c.metadata.name);
    for (const spare of spares) for (const m of spare.mounts) expect(names).not.toContain(m.source);
  });
});

describe(`the egress's pod identities, ${STANDIN}`, () => {
  it('resolves a pod IP to its Sandbox\'s Berth name, follows a rename, answers nothing for an unknown or removed pod, and reports the address of a pod that went', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigFor(api.url));
    const runtime = new KubernetesSandboxRuntime({ kubeConfig, namespace: NS, egress: { host: '10.96.0.12', port: 3128 } });
    const names = new PodSandboxNames(kubeConfig, NS);
    const name = 'berth-pool-env_int-abc';
    await runtime.ensureRunning({ name, image: engine.baseImage, labels: { 'berth.managed': 'true' }, env: {}, network: 'none', user: '1000:1000', workdir: '/tmp', memoryBytes: 64 * 1024 * 1024, nanoCpus: 500_000_000, pidsLimit: 64, readOnlyRoot: false, cmd: ['sleep', 'infinity'] });
    try {
      const pod = api.objectsOfPods().find((p) => p.metadata.labels['berth.name'] === name);
      const ip = pod?.status.podIP as string;
      expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(await names.nameOf(ip)).toEqual({ name });
      await runtime.relabel(name, 'berth-s-sesn_pods-g1');
      expect(await names.nameOf(ip)).toEqual({ name: 'berth-s-sesn_pods-g1' });
      expect(await names.nameOf('10.255.255.254')).toEqual({ unbound: expect.stringContaining('no single Berth sandbox pod has address 10.255.255.254') });
      const following = new AbortController();
      const gone: string[] = [];
      const followed = names.follow(following.signal, (freed) => gone.push(freed));
      await runtime.remove('berth-s-sesn_pods-g1');
      expect(await names.nameOf(ip)).toEqual({ unbound: expect.any(String) });
      // The egress forgets what it concluded about the address as soon as its pod goes.
      for (const deadline = Date.now() + 10_000; !gone.includes(ip) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(gone).toContain(ip);
      following.abort();
      await followed;
    } finally {
      await runtime.remove(name);
    }
  });
});
