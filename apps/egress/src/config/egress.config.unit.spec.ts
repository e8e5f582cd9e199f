import { EgressConfigSchema } from './egress.config';

describe('the egress for Kubernetes sandbox pods (BERTH_EGRESS_LISTEN)', () => {
  it('is off unless a listen address is given', () => {
    expect(EgressConfigSchema.parse({}).pods).toBeNull();
  });

  it('reads the listen address, the sandbox namespace and the kubeconfig (in-cluster by default)', () => {
    expect(EgressConfigSchema.parse({ BERTH_EGRESS_LISTEN: '0.0.0.0:3128', BERTH_EGRESS_K8S_NAMESPACE: 'berth-sandboxes' }).pods).toEqual({ host: '0.0.0.0', port: 3128, namespace: 'berth-sandboxes', kubeconfig: 'in-cluster' });
  });

  it.each([
    ['no sandbox namespace to identify pods in', { BERTH_EGRESS_LISTEN: '0.0.0.0:3128' }, 'BERTH_EGRESS_K8S_NAMESPACE'],
    ['a listen address without a port', { BERTH_EGRESS_LISTEN: '0.0.0.0', BERTH_EGRESS_K8S_NAMESPACE: 'b' }, 'BERTH_EGRESS_LISTEN'],
  ])('refuses %s, naming the setting', (_what, env, setting) => {
    const parsed = EgressConfigSchema.safeParse(env);
    expect(parsed.success).toBe(false);
    expect(parsed.success ? [] : parsed.error.issues.map((i) => i.path.join('.'))).toContain(setting);
  });
});

describe('BERTH_EGRESS_BUILD_MIRROR_HOSTS', () => {
  it('reads the hosts of the operator\'s internal package mirrors (none by default)', () => {
    expect(EgressConfigSchema.parse({}).buildMirrorHosts).toEqual([]);
    expect(EgressConfigSchema.parse({ BERTH_EGRESS_BUILD_MIRROR_HOSTS: 'apt.corp.example, npm.corp.example' }).buildMirrorHosts).toEqual(['apt.corp.example', 'npm.corp.example']);
  });
});
