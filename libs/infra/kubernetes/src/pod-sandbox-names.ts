import { CoreV1Api, CustomObjectsApi, type KubeConfig, Watch } from '@kubernetes/client-node';
import { apiError, statusOf } from './api-errors';
import { AGENT_SANDBOX, BERTH_NAME_LABEL, type SandboxObject } from './sandbox-resource';

export type PodSandboxName = Readonly<{ name: string }> | Readonly<{ unbound: string }>;

/**
 * The sandbox behind a pod IP, for the egress: the one running, not deleting, Berth-managed pod of
 * the sandbox namespace with that IP, then the Sandbox that controls it (its owner reference) and
 * that Sandbox's Berth name label, which only the manager sets. No pod, several (an IP reused
 * mid-change), a pod no Sandbox owns: nothing is served. The pod IP is trusted because the
 * cluster's network plugin does not let a pod send from another's address, and the NetworkPolicy
 * lets only sandbox pods reach the egress.
 */
export class PodSandboxNames {
  private readonly core: CoreV1Api;
  private readonly objects: CustomObjectsApi;
  private readonly watch: Watch;

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly managedLabels: Readonly<Record<string, string>> = { 'berth.managed': 'true' },
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.objects = kubeConfig.makeApiClient(CustomObjectsApi);
    this.watch = new Watch(kubeConfig);
  }

  /**
   * Calls `onGone(ip)` as soon as a pod that had `ip` is deleting, deleted or no longer running:
   * whatever was concluded about that address must be forgotten before the cluster can give it to
   * another pod (a cached answer would otherwise serve the new pod as the old sandbox). A dropped
   * watch is re-opened until `signal` aborts.
   */
  async follow(signal: AbortSignal, onGone: (ip: string) => void): Promise<void> {
    const labelSelector = Object.entries(this.managedLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    while (!signal.aborted) {
      await new Promise<void>((resolve) => {
        signal.addEventListener('abort', () => resolve(), { once: true });
        void this.watch
          .watch(
            `/api/v1/namespaces/${this.namespace}/pods`,
            { labelSelector },
            (type: string, pod: { metadata?: { deletionTimestamp?: unknown }; status?: { phase?: string; podIP?: string } }) => {
              const ip = pod.status?.podIP;
              if (ip !== undefined && (type === 'DELETED' || pod.metadata?.deletionTimestamp !== undefined || pod.status?.phase !== 'Running')) onGone(ip);
            },
            () => resolve(),
          )
          .then((request) => (signal.aborted ? request.abort() : signal.addEventListener('abort', () => request.abort(), { once: true })), () => resolve());
      });
      if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async nameOf(podIp: string): Promise<PodSandboxName> {
    const labelSelector = Object.entries(this.managedLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    let pods;
    try {
      pods = (await this.core.listNamespacedPod({ namespace: this.namespace, labelSelector, fieldSelector: `status.podIP=${podIp}` })).items;
    } catch (error) {
      throw apiError('find pod of', podIp, error);
    }
    const live = pods.filter((p) => p.status?.phase === 'Running' && p.metadata?.deletionTimestamp === undefined);
    if (live.length !== 1) return { unbound: `no single Berth sandbox pod has address ${podIp} in namespace ${this.namespace} (${live.length} found)` };
    const pod = live[0];
    const owner = pod?.metadata?.ownerReferences?.find((o) => o.kind === AGENT_SANDBOX.kind && o.controller === true);
    if (owner === undefined) return { unbound: `pod ${pod?.metadata?.name} is controlled by no Sandbox` };
    let sandbox: SandboxObject;
    try {
      sandbox = (await this.objects.getNamespacedCustomObject({ group: AGENT_SANDBOX.group, version: AGENT_SANDBOX.version, namespace: this.namespace, plural: AGENT_SANDBOX.plural, name: owner.name })) as SandboxObject;
    } catch (error) {
      if (statusOf(error) === 404) return { unbound: `the Sandbox ${owner.name} of pod ${pod?.metadata?.name} is gone` };
      throw apiError('get sandbox', owner.name, error);
    }
    if (owner.uid !== undefined && sandbox.metadata.uid !== undefined && owner.uid !== sandbox.metadata.uid) return { unbound: `the Sandbox ${owner.name} was replaced` };
    const name = sandbox.metadata.labels?.[BERTH_NAME_LABEL];
    return name === undefined ? { unbound: `the Sandbox ${owner.name} carries no ${BERTH_NAME_LABEL}` } : { name };
  }
}
