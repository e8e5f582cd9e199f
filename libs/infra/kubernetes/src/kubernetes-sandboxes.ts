import { existsSync } from 'node:fs';
import { CoreV1Api, CustomObjectsApi, KubeConfig, NetworkingV1Api } from '@kubernetes/client-node';
import { statusOf } from './api-errors';
import { ClaimWorkspaces } from './claim-workspaces';
import { KubernetesSandboxRuntime } from './kubernetes-sandbox-runtime';
import { AGENT_SANDBOX, type PodEgress } from './sandbox-resource';
import { SANDBOX_NETWORK_POLICY, sandboxNetworkPolicy } from './sandbox-network-policy';

export type KubernetesSandboxesOptions = Readonly<{
  /** A kubeconfig file, or `in-cluster` (the pod's service account). */
  kubeconfig: string;
  /** The namespace sandboxes, their workspace claims and their NetworkPolicy live in. */
  namespace: string;
  /** `namespace/name` of the egress Service: its cluster IP and port are the pods' only way out. */
  egressService: string;
  storageClass: string | null;
  managedLabels: Readonly<Record<string, string>>;
  scopeLabels: Readonly<Record<string, string>>;
}>;

export type KubernetesSandboxes = Readonly<{ runtime: KubernetesSandboxRuntime; workspaces: ClaimWorkspaces; egress: PodEgress; server: string }>;

/** A start-up refusal: what is wrong with the configuration or the cluster, said so an operator can fix it. */
export class KubernetesSetupError extends Error {
  override readonly name = 'KubernetesSetupError';
}

/** A kubeconfig file, or `in-cluster`; `setting` names the variable in the messages. */
export function loadKubeConfig(source: string, setting = 'BERTH_K8S_KUBECONFIG'): KubeConfig {
  const kc = new KubeConfig();
  if (source === 'in-cluster') {
    if (process.env['KUBERNETES_SERVICE_HOST'] === undefined) throw new KubernetesSetupError(`${setting}=in-cluster, but this process does not run in a pod (KUBERNETES_SERVICE_HOST is not set)`);
    kc.loadFromCluster();
    return kc;
  }
  if (!existsSync(source)) throw new KubernetesSetupError(`${setting}: no file ${source}`);
  try {
    kc.loadFromFile(source);
  } catch (error) {
    throw new KubernetesSetupError(`${setting}: ${source} is not a kubeconfig: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (kc.getCurrentCluster() === null) throw new KubernetesSetupError(`${setting}: ${source} has no current context with a cluster`);
  return kc;
}

/** Why an API call at start failed, as an operator reads it. */
function explain(what: string, server: string, error: unknown): KubernetesSetupError {
  const status = statusOf(error);
  const cause = error instanceof Error ? error.message : String(error);
  if (status === 401) return new KubernetesSetupError(`${what}: the API server at ${server} does not accept the kubeconfig's credentials (401)`);
  if (status === 403) return new KubernetesSetupError(`${what}: the manager's account may not do this (403); grant it the Role in deploy/kubernetes/sandboxes (${cause})`);
  if (status === null) return new KubernetesSetupError(`${what}: cannot reach the API server at ${server}: ${cause}`);
  return new KubernetesSetupError(`${what}: ${status} ${cause}`);
}

/**
 * Everything the sandbox-manager needs to run sandboxes on a cluster, checked before it consumes
 * anything: the kubeconfig loads, the agent-sandbox `Sandbox` resource is served in the namespace,
 * the egress Service exists (its cluster IP and port go to every pod's relay, its selector and
 * target port into the NetworkPolicy), and the NetworkPolicy that confines sandbox pods to it is
 * applied. Any of these failing stops the manager with a message naming the setting or the grant.
 */
export async function openKubernetesSandboxes(options: KubernetesSandboxesOptions): Promise<KubernetesSandboxes> {
  const kubeConfig = loadKubeConfig(options.kubeconfig);
  const server = kubeConfig.getCurrentCluster()?.server ?? '(none)';
  const { namespace } = options;
  const objects = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await objects.listNamespacedCustomObject({ group: AGENT_SANDBOX.group, version: AGENT_SANDBOX.version, namespace, plural: AGENT_SANDBOX.plural, limit: 1 });
  } catch (error) {
    if (statusOf(error) === 404) {
      throw new KubernetesSetupError(`the API server at ${server} serves no ${AGENT_SANDBOX.plural}.${AGENT_SANDBOX.group}/${AGENT_SANDBOX.version} in namespace ${namespace}: install the kubernetes-sigs/agent-sandbox CRDs and controller, and create the namespace (BERTH_K8S_NAMESPACE)`);
    }
    throw explain(`listing Sandboxes in namespace ${namespace}`, server, error);
  }
  const egress = await egressServiceOf(kubeConfig, options.egressService, server);
  const policy = sandboxNetworkPolicy({ sandboxLabels: options.managedLabels, egressNamespace: egress.namespace, egressPodLabels: egress.podLabels, egressPort: egress.targetPort });
  const networking = kubeConfig.makeApiClient(NetworkingV1Api);
  try {
    await networking.createNamespacedNetworkPolicy({ namespace, body: policy });
  } catch (error) {
    if (statusOf(error) !== 409) throw explain(`applying NetworkPolicy ${SANDBOX_NETWORK_POLICY} in namespace ${namespace}`, server, error);
    try {
      await networking.replaceNamespacedNetworkPolicy({ name: SANDBOX_NETWORK_POLICY, namespace, body: policy });
    } catch (replaceError) {
      throw explain(`updating NetworkPolicy ${SANDBOX_NETWORK_POLICY} in namespace ${namespace}`, server, replaceError);
    }
  }
  const podEgress = { host: egress.clusterIp, port: egress.port };
  return {
    runtime: new KubernetesSandboxRuntime({ kubeConfig, namespace, managedLabels: options.managedLabels, egress: podEgress }),
    workspaces: new ClaimWorkspaces({ kubeConfig, namespace, storageClass: options.storageClass, scopeLabels: options.scopeLabels }),
    egress: podEgress,
    server,
  };
}

type EgressService = Readonly<{ namespace: string; clusterIp: string; port: number; targetPort: number; podLabels: Readonly<Record<string, string>> }>;

async function egressServiceOf(kubeConfig: KubeConfig, ref: string, server: string): Promise<EgressService> {
  const [namespace, name] = ref.split('/');
  if (namespace === undefined || name === undefined || namespace === '' || name === '') throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE must be namespace/name, not ${JSON.stringify(ref)}`);
  let service;
  try {
    service = await kubeConfig.makeApiClient(CoreV1Api).readNamespacedService({ name, namespace });
  } catch (error) {
    if (statusOf(error) === 404) throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE: no Service ${name} in namespace ${namespace} (the egress, apps/egress with BERTH_EGRESS_LISTEN)`);
    throw explain(`reading the egress Service ${ref}`, server, error);
  }
  const clusterIp = service.spec?.clusterIP;
  const port = service.spec?.ports?.[0];
  const selector = service.spec?.selector ?? {};
  if (clusterIp === undefined || clusterIp === 'None' || clusterIp === '') throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE: ${ref} has no cluster IP (a headless Service): sandboxes get no DNS, they need its IP`);
  if (port === undefined) throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE: ${ref} has no port`);
  if (Object.keys(selector).length === 0) throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE: ${ref} has no pod selector: the NetworkPolicy could not name the egress pods`);
  const targetPort = typeof port.targetPort === 'number' ? port.targetPort : port.targetPort === undefined ? port.port : Number.NaN;
  if (!Number.isInteger(targetPort)) throw new KubernetesSetupError(`BERTH_K8S_EGRESS_SERVICE: ${ref} names its target port (${String(port.targetPort)}): give it as a number, the NetworkPolicy needs it`);
  return { namespace, clusterIp, port: port.port, targetPort, podLabels: selector };
}
