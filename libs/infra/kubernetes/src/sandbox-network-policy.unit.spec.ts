import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { sandboxNetworkPolicy } from './sandbox-network-policy';

const policy = () =>
  sandboxNetworkPolicy({ sandboxLabels: { 'berth.managed': 'true', 'berth.scope': 'prod' }, egressNamespace: 'berth', egressPodLabels: { 'app.kubernetes.io/name': 'egress' }, egressPort: 3128 }) as {
    spec: { podSelector: unknown; policyTypes: string[]; ingress: unknown[]; egress: { to: unknown[]; ports: unknown[] }[] };
  };

describe('the NetworkPolicy of sandbox pods', () => {
  it('validates against the Kubernetes API schema', () => {
    expect(() => new NetworkPolicy(policy() as never).validate()).not.toThrow();
  });

  it('catches a broken policy (the schema check can fail)', () => {
    const broken = policy();
    (broken.spec.egress[0] as { ports: unknown[] }).ports = [{ protocol: 'TCP', port: { not: 'a port' } }];
    expect(() => new NetworkPolicy(broken as never).validate()).toThrow();
  });

  it('selects the installation\'s sandbox pods, admits nothing in, and lets them reach only the egress pods on their port: no DNS, no other pod, no address outside', () => {
    const { spec } = policy();
    expect(spec.podSelector).toEqual({ matchLabels: { 'berth.managed': 'true', 'berth.scope': 'prod' } });
    expect(spec.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(spec.ingress).toEqual([]);
    expect(spec.egress).toEqual([
      {
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'berth' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'egress' } } }],
        ports: [{ protocol: 'TCP', port: 3128 }],
      },
    ]);
  });
});
