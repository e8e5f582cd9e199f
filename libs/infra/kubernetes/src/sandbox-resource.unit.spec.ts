import type { SandboxSpec } from '@berth/ports';
import { type PodObject, podPhaseOf, sandboxInfoOf, sandboxObjectName, sandboxResource } from './sandbox-resource';

const spec = (over: Partial<SandboxSpec> = {}): SandboxSpec => ({
  name: 'berth-s-sesn_AbC-g2',
  image: 'berth/harness:1',
  labels: { 'berth.managed': 'true', 'berth.session': 'sesn_AbC' },
  env: { A: '1' },
  network: 'none',
  user: '1000:1000',
  workdir: '/workspace',
  memoryBytes: 256 * 1024 * 1024,
  nanoCpus: 1_500_000_000,
  pidsLimit: 64,
  readOnlyRoot: true,
  cmd: ['sleep', 'infinity'],
  ...over,
});

const pod = (phase: string, state: object): PodObject => ({ metadata: { name: 'berth-x' }, status: { phase, containerStatuses: [{ name: 'sandbox', state }] } });

describe('Kubernetes sandbox resources', () => {
  it('a Sandbox named by a hash of the Berth name, hardened whatever the spec says', () => {
    const body = sandboxResource(spec(), 'berth') as { metadata: { name: string; labels: Record<string, string> }; spec: { podTemplate: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } } };
    expect(body.metadata.name).toBe(sandboxObjectName('berth-s-sesn_AbC-g2'));
    expect(body.metadata.name).toMatch(/^berth-[0-9a-f]{20}$/);
    expect(body.metadata.labels['berth.name']).toBe('berth-s-sesn_AbC-g2');
    const pod = body.spec.podTemplate.spec;
    expect(pod).toMatchObject({ automountServiceAccountToken: false, hostNetwork: false, restartPolicy: 'Never', securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } } });
    expect(pod.containers[0]).toMatchObject({
      securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      resources: { limits: { memory: String(256 * 1024 * 1024), cpu: '1500m' } },
    });
  });

  it.each([
    ['root', { user: '0:0' }],
    ['a user name', { user: 'agent' }],
    ['the host network', { network: 'host' }],
    ['a host bind', { mounts: [{ type: 'bind' as const, source: '/var/run', target: '/x' }] }],
    ['a volume that names no claim', { mounts: [{ type: 'volume' as const, source: 'Not_A_Claim', target: '/x' }] }],
    ['an egress when no egress Service is configured', { egress: { mountAt: '/run/berth', relayPort: 3128 } }],
  ])('refuses %s', (_what, over) => {
    expect(() => sandboxResource(spec(over as Partial<SandboxSpec>), 'berth')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });

  it('points the relay at the egress Service instead of a socket, and mounts workspace volumes as claims', () => {
    const body = sandboxResource(
      spec({ egress: { mountAt: '/run/berth', relayPort: 3128 }, mounts: [{ type: 'volume', source: 'berth-ws-abc-workspace', target: '/workspace' }] }),
      'berth',
      { host: '10.96.0.12', port: 3128 },
    ) as { spec: { podTemplate: { spec: { containers: { env: { name: string; value: string }[]; volumeMounts: { name: string; mountPath: string }[] }[]; volumes: Record<string, unknown>[] } } } };
    const pod = body.spec.podTemplate.spec;
    expect(pod.containers[0]?.env).toEqual(expect.arrayContaining([{ name: 'BERTH_EGRESS_RELAY_PORT', value: '3128' }, { name: 'BERTH_EGRESS_TCP', value: '10.96.0.12:3128' }]));
    const workspace = pod.containers[0]?.volumeMounts.find((m) => m.mountPath === '/workspace');
    // The claim replaces the scratch emptyDir the read-only root would have put at the workdir.
    expect(pod.containers[0]?.volumeMounts.filter((m) => m.mountPath === '/workspace')).toHaveLength(1);
    expect(pod.volumes.find((v) => v['name'] === workspace?.name)).toEqual({ name: workspace?.name, persistentVolumeClaim: { claimName: 'berth-ws-abc-workspace', readOnly: false } });
    // The egress CA, where a Docker sandbox finds it beside its socket.
    const trust = pod.containers[0]?.volumeMounts.find((m) => m.mountPath === '/run/berth');
    expect(trust).toMatchObject({ readOnly: true });
    expect(pod.volumes.find((v) => v['name'] === trust?.name)).toEqual({ name: trust?.name, configMap: { name: 'berth-egress-trust' } });
  });

  it('maps pod phases to the same facts as Docker', () => {
    const sandbox = { metadata: { name: 'berth-x', labels: { 'berth.name': 'berth-s-a-g1' } } };
    expect(sandboxInfoOf(sandbox, null)).toMatchObject({ name: 'berth-s-a-g1', running: false, exitCode: null });
    expect(sandboxInfoOf(sandbox, pod('Pending', { waiting: { reason: 'ContainerCreating' } }))).toMatchObject({ running: false, exitCode: null });
    expect(sandboxInfoOf(sandbox, pod('Running', { running: { startedAt: new Date('2026-01-01T00:00:00Z') } }))).toMatchObject({ running: true, exitCode: null, startedAt: '2026-01-01T00:00:00.000Z' });
    expect(sandboxInfoOf(sandbox, pod('Failed', { terminated: { exitCode: 137, reason: 'OOMKilled' } }))).toMatchObject({ running: false, exitCode: 137, oomKilled: true });
    expect(podPhaseOf(pod('Succeeded', { terminated: { exitCode: 0 } }))).toBe('terminated');
    expect(podPhaseOf(pod('Running', { running: {} }))).toBe('running');
    expect(podPhaseOf(pod('Pending', {}))).toBe('pending');
  });
});
