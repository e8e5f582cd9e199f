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
