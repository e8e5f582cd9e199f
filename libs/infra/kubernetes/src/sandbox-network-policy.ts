/** The policy every Berth sandbox pod of a namespace is under (the manager applies it at start). */
export const SANDBOX_NETWORK_POLICY = 'berth-sandboxes-egress-only';

export type SandboxNetworkPolicyInput = Readonly<{
  /** The labels of Berth's sandbox pods (`berth.managed`, the installation's scope). */
  sandboxLabels: Readonly<Record<string, string>>;
  /** Where the egress pods run, and the labels that select them. */
  egressNamespace: string;
  egressPodLabels: Readonly<Record<string, string>>;
  /** The egress pods' port (the target port behind the Service). */
  egressPort: number;
}>;

/**
 * A sandbox pod reaches the egress pods on their port and nothing else: no other pod, no node,
 * no cloud metadata address, and no DNS (the cluster resolver forwards queries outside, a channel
 * out; the relay is given the egress Service's IP). Nothing reaches a sandbox pod (exec goes
 * through the API server and the kubelet, not the pod network). NetworkPolicy is enforced by the
 * cluster's network plugin: one that ignores it (some do) leaves the pods open.
 */
export function sandboxNetworkPolicy(input: SandboxNetworkPolicyInput): Record<string, unknown> {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: SANDBOX_NETWORK_POLICY, labels: { 'berth.managed': 'true' } },
    spec: {
      podSelector: { matchLabels: { ...input.sandboxLabels } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': input.egressNamespace } }, podSelector: { matchLabels: { ...input.egressPodLabels } } }],
          ports: [{ protocol: 'TCP', port: input.egressPort }],
        },
      ],
    },
  };
}
