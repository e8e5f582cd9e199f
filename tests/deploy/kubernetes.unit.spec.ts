import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * deploy/kubernetes against the Kubernetes 1.27 API schemas that kubernetes-models vendors (no
 * cluster or kubectl here): every object validates, kustomization.yaml lists every file, and the
 * pods run the way docs/deploy.md promises (non-root, no privilege escalation, read-only root,
 * limits; only the sandbox-manager gets the Docker socket).
 */
const DIR = join(__dirname, '..', '..', 'deploy', 'kubernetes');

type K8sObject = { apiVersion: string; kind: string; metadata?: { name?: string }; spec?: any };

/** `apps/v1` + `Deployment` → the model class that validates it. */
function modelFor(o: K8sObject): { new (data: unknown): { validate(): void } } {
  const group = o.apiVersion.includes('/') ? o.apiVersion : `v1`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(`kubernetes-models/${group}/${o.kind}`) as Record<string, { new (data: unknown): { validate(): void } }>;
  return module[o.kind];
}

const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
const objects: { file: string; object: K8sObject }[] = files.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0].message}`);
    return { file, object: doc.toJS() as K8sObject };
  }),
);
const deployments = objects.filter((o) => o.object.kind === 'Deployment').map((o) => o.object);

describe('deploy/kubernetes', () => {
  it.each(objects.map((o) => [`${o.file}: ${o.object.kind} ${o.object.metadata?.name}`, o.object] as const))('%s validates against the API schema', (_name, object) => {
    const Model = modelFor(object);
    expect(() => new Model(object).validate()).not.toThrow();
  });

  it('catches a broken object (the check can fail)', () => {
    const broken = structuredClone(deployments[0]);
    broken.spec.replicas = 'two';
    expect(() => new (modelFor(broken))(broken).validate()).toThrow();
  });

  it('lists every manifest in kustomization.yaml, and nothing else', () => {
    const kustomization = parseAllDocuments(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8'))[0].toJS() as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it('runs the four services, each non-root, without privilege escalation, on a read-only root, with a memory limit', () => {
    expect(deployments.map((d) => d.metadata?.name).sort()).toEqual(['gateway', 'sandbox-manager', 'session-kernel', 'turn-reconciler']);
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        expect(c.resources.limits.memory).toBeDefined();
        expect(c.readinessProbe).toBeDefined();
      }
    }
  });

  it('gives the Docker socket to the sandbox-manager only', () => {
    const withSocket = deployments.filter((d) => (d.spec.template.spec.volumes ?? []).some((v: { hostPath?: { path: string } }) => v.hostPath?.path === '/var/run/docker.sock'));
    expect(withSocket.map((d) => d.metadata?.name)).toEqual(['sandbox-manager']);
  });

  it('runs the egress beside the sandbox-manager on its node, the only container with the model key, sharing the egress host directory', () => {
    const pod = deployments.find((d) => d.metadata?.name === 'sandbox-manager')?.spec.template.spec;
    type Container = { name: string; env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { key: string } } }[]; volumeMounts?: { name: string; mountPath: string }[] };
    const containers = pod.containers as Container[];
    expect(containers.map((c) => c.name).sort()).toEqual(['egress', 'sandbox-manager']);
    const everyContainer = deployments.flatMap((d) => d.spec.template.spec.containers as Container[]);
    const withModelKey = everyContainer.filter((c) => (c.env ?? []).some((e) => e.valueFrom?.secretKeyRef?.key === 'model-api-key'));
    expect(withModelKey.map((c) => c.name)).toEqual(['egress']);
    const egressDirVolume = (pod.volumes as { name: string; hostPath?: { path: string } }[]).find((v) => v.name === 'egress-dir');
    for (const c of containers) {
      expect(c.env?.find((e) => e.name === 'BERTH_EGRESS_DIR')?.value).toBe(egressDirVolume?.hostPath?.path);
      expect(c.volumeMounts?.find((m) => m.name === 'egress-dir')?.mountPath).toBe(egressDirVolume?.hostPath?.path);
    }
    const metricsPorts = containers.flatMap((c) => (c as { ports?: { containerPort: number }[] }).ports ?? []).map((p) => p.containerPort);
    expect(new Set(metricsPorts).size).toBe(metricsPorts.length);
  });
});

describe('deploy/kubernetes: NATS', () => {
  const find = (kind: string, name: string) => objects.find((o) => o.object.kind === kind && o.object.metadata?.name === name)?.object as K8sObject;
  const config = (find('ConfigMap', 'berth-config') as unknown as { data: Record<string, string> }).data;

  it('runs a three-node cluster whose pods name themselves, on stable route names, every stream with three replicas', () => {
    const nats = find('StatefulSet', 'nats');
    expect(nats.spec.replicas).toBe(3);
    expect(nats.spec.serviceName).toBe('nats-cluster');
    const container = nats.spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'NATS_SERVER_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    const natsConf = (find('ConfigMap', 'berth-nats-config') as unknown as { data: Record<string, string> }).data['nats.conf'];
    expect(natsConf).toContain('server_name: $NATS_SERVER_NAME');
    expect(natsConf).toContain('include ./auth/cluster.conf');
    const authItems = nats.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'auth').secret.items.map((i: { key: string }) => i.key);
    expect(authItems.sort()).toEqual(['cluster.conf', 'server-auth.conf']);
    expect(find('Service', 'nats-cluster').spec).toMatchObject({ clusterIP: 'None', publishNotReadyAddresses: true });
    expect(config['NATS_URL'].split(',')).toEqual([0, 1, 2].map((i) => `nats://nats-${i}.nats-cluster:4222`));
    expect(config['BERTH_NATS_STREAM_REPLICAS']).toBe('3');
  });

  it('lets only NATS pods reach the route port, and only Berth services the client port', () => {
    const ingress = find('NetworkPolicy', 'nats-from-berth-only').spec.ingress as { from: { podSelector: unknown }[]; ports: { port: number }[] }[];
    const rule = (port: number) => ingress.filter((r) => r.ports.some((p) => p.port === port));
    expect(rule(6222)).toEqual([{ from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'nats' } } }], ports: [{ port: 6222 }] }]);
    expect(rule(4222)).toHaveLength(1);
  });
});

/**
 * deploy/kubernetes/kubernetes-sandboxes: the overlay that runs sandboxes as agent-sandbox
 * Sandboxes on the cluster. Its objects validate; its JSON patches, applied to the base here as
 * kustomize would, give objects that validate and say what docs/scale-out.md promises. (That the
 * Roles grant exactly what the code calls is checked by the Kubernetes e2e test against the
 * recorded-API stand-in.)
 */
describe('deploy/kubernetes/kubernetes-sandboxes', () => {
  const OVERLAY = join(DIR, 'kubernetes-sandboxes');
  const overlayFiles = readdirSync(OVERLAY).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
  const patchFiles = overlayFiles.filter((f) => f.endsWith('.patch.yaml'));
  const overlayObjects = overlayFiles
    .filter((f) => !patchFiles.includes(f))
    .flatMap((file) => parseAllDocuments(readFileSync(join(OVERLAY, file), 'utf8')).map((doc) => ({ file, object: doc.toJS() as K8sObject & { metadata: { name: string; namespace?: string } } })));
  const kustomization = parseAllDocuments(readFileSync(join(OVERLAY, 'kustomization.yaml'), 'utf8'))[0].toJS() as { resources: string[]; patches: { path: string; target: { kind: string; name: string } }[]; namespace?: string };
  const patched = (kind: string, name: string) => {
    const entry = kustomization.patches.find((p) => p.target.kind === kind && p.target.name === name);
    const base = structuredClone(objects.find((o) => o.object.kind === kind && o.object.metadata?.name === name)?.object) as K8sObject;
    const ops = parseAllDocuments(readFileSync(join(OVERLAY, entry?.path as string), 'utf8'))[0].toJS() as JsonPatchOp[];
    return applyJsonPatch(base, ops);
  };
  const find = (kind: string, name: string) => overlayObjects.find((o) => o.object.kind === kind && o.object.metadata.name === name)?.object as K8sObject & { metadata: { namespace?: string } };
  type Env = { name: string; value?: string }[];
  const envOf = (container: { env?: Env }) => Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value]));

  it.each(overlayObjects.map((o) => [`${o.file}: ${o.object.kind} ${o.object.metadata.name}`, o.object] as const))('%s validates against the API schema', (_name, object) => {
    expect(() => new (modelFor(object))(object).validate()).not.toThrow();
  });

  it('builds on the base and lists every file; sets no namespace over its objects (they live in two)', () => {
    expect(kustomization.resources[0]).toBe('..');
    expect([...kustomization.resources.slice(1), ...kustomization.patches.map((p) => p.path)].sort()).toEqual([...overlayFiles].sort());
    expect(kustomization.namespace).toBeUndefined();
    for (const { object } of overlayObjects) if (object.kind !== 'Namespace') expect(object.metadata.namespace).toMatch(/^berth(-sandboxes)?$/);
  });

  it('runs the sandbox-manager on the Kubernetes runtime with its service account: no Docker socket, no host path, no egress container, no node pinning', () => {
    const manager = patched('Deployment', 'sandbox-manager');
    expect(() => new (modelFor(manager))(manager).validate()).not.toThrow();
    const pod = manager.spec.template.spec;
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.serviceAccountName).toBe('sandbox-manager');
    expect((pod.volumes as { hostPath?: unknown }[]).filter((v) => v.hostPath !== undefined)).toEqual([]);
    expect(pod.containers.map((c: { name: string }) => c.name)).toEqual(['sandbox-manager']);
    const env = envOf(pod.containers[0]);
    expect(env).toMatchObject({ BERTH_SANDBOX_RUNTIME: 'kubernetes', BERTH_K8S_KUBECONFIG: 'in-cluster', BERTH_K8S_NAMESPACE: 'berth-sandboxes', BERTH_K8S_EGRESS_SERVICE: 'berth/egress' });
    expect(env['DOCKER_HOST']).toBeUndefined();
    expect(find('Namespace', 'berth-sandboxes')).toBeDefined();
  });

  it('runs the egress behind a cluster-IP Service whose numeric target port it listens on, identifying pods in the sandbox namespace, with one CA for all replicas', () => {
    const egress = find('Deployment', 'egress');
    const service = find('Service', 'egress');
    expect(service.metadata.namespace).toBe('berth');
    expect(service.spec.clusterIP).toBeUndefined();
    expect(service.spec.selector).toEqual(egress.spec.template.metadata.labels);
    const env = envOf(egress.spec.template.spec.containers[0]);
    expect(Number(env['BERTH_EGRESS_LISTEN']?.split(':')[1])).toBe(service.spec.ports[0].targetPort);
    expect(env['BERTH_EGRESS_K8S_NAMESPACE']).toBe('berth-sandboxes');
    expect(egress.spec.template.spec.serviceAccountName).toBe('egress');
    const caVolume = egress.spec.template.spec.volumes.find((v: { secret?: { secretName: string } }) => v.secret?.secretName === 'berth-egress-ca');
    const caMount = egress.spec.template.spec.containers[0].volumeMounts.find((m: { name: string }) => m.name === caVolume?.name);
    expect(caMount?.mountPath).toBe(env['BERTH_EGRESS_CA_DIR']);
    // The egress container is the only one with the model key in the overlay, as in the base.
    expect(egress.spec.template.spec.containers[0].env.some((e: { valueFrom?: { secretKeyRef?: { key: string } } }) => e.valueFrom?.secretKeyRef?.key === 'model-api-key')).toBe(true);
    const managerEnv = envOf(patched('Deployment', 'sandbox-manager').spec.template.spec.containers[0]);
    expect(managerEnv['BERTH_K8S_EGRESS_SERVICE']).toBe(`${service.metadata.namespace}/${service.metadata.name}`);
  });

  it('admits only sandbox pods to the egress\'s sandbox port, and the egress pods to NATS', () => {
    const policy = find('NetworkPolicy', 'egress-from-sandboxes');
    const sandboxRule = (policy.spec.ingress as { from: unknown[]; ports: { port: number }[] }[]).find((r) => r.ports.some((p) => p.port === 8128));
    expect(sandboxRule?.from).toEqual([{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'berth-sandboxes' } }, podSelector: { matchLabels: { 'berth.managed': 'true' } } }]);
    const nats = patched('NetworkPolicy', 'nats-from-berth-only');
    expect(() => new (modelFor(nats))(nats).validate()).not.toThrow();
    expect(nats.spec.ingress[0].from[0].podSelector.matchExpressions[0].values).toContain('egress');
  });

  it('binds each Role to the service account its Deployment runs as, and grants no Secret, no cluster-wide role', () => {
    const bindings = overlayObjects.filter((o) => o.object.kind === 'RoleBinding').map((o) => o.object as unknown as { subjects: { name: string }[]; roleRef: { name: string } });
    expect([...new Set(bindings.flatMap((b) => b.subjects.map((s) => s.name)))].sort()).toEqual(['egress', 'sandbox-manager']);
    expect(overlayObjects.some((o) => o.object.kind === 'ClusterRole' || o.object.kind === 'ClusterRoleBinding')).toBe(false);
    const resources = overlayObjects.filter((o) => o.object.kind === 'Role').flatMap((o) => (o.object as unknown as { rules: { resources: string[] }[] }).rules.flatMap((r) => r.resources));
    expect(resources).not.toContain('secrets');
  });

  it('catches a patch that does not apply (the check can fail)', () => {
    expect(() => applyJsonPatch({ spec: {} }, [{ op: 'remove', path: '/spec/template/spec/nodeSelector' }])).toThrow();
  });
});

type JsonPatchOp = { op: 'add' | 'remove' | 'replace'; path: string; value?: unknown };

/** RFC 6902 add/remove/replace (what the overlay's patches use), failing on a path that is not there as kustomize does. */
function applyJsonPatch<T>(document: T, ops: readonly JsonPatchOp[]): T {
  for (const op of ops) {
    const keys = op.path.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop() as string;
    let parent: any = document;
    for (const key of keys) {
      if (parent === undefined || parent === null || !(key in parent)) throw new Error(`${op.op} ${op.path}: no ${key}`);
      parent = parent[key];
    }
    if (Array.isArray(parent)) {
      if (op.op === 'add') parent.splice(last === '-' ? parent.length : Number(last), 0, op.value);
      else if (!(Number(last) < parent.length)) throw new Error(`${op.op} ${op.path}: no element ${last}`);
      else if (op.op === 'remove') parent.splice(Number(last), 1);
      else parent[Number(last)] = op.value;
      continue;
    }
    if (op.op !== 'add' && !(last in parent)) throw new Error(`${op.op} ${op.path}: no ${last}`);
    if (op.op === 'remove') delete parent[last];
    else parent[last] = op.value;
  }
  return document;
}
