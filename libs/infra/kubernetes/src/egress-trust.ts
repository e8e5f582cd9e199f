import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { apiError, statusOf } from './api-errors';

/**
 * The ConfigMap holding the egress CA's certificate (and the bundle with the public roots) in the
 * sandbox namespace: every sandbox pod mounts it read-only where a Docker sandbox finds the files
 * beside its egress socket, so the egress can add vault credentials to HTTPS requests. The
 * egress publishes it; certificates only, the key never leaves the egress.
 */
export const EGRESS_TRUST_CONFIG_MAP = 'berth-egress-trust';

/** Creates or replaces the trust ConfigMap with `files` (file name → PEM). */
export async function publishEgressTrust(kubeConfig: KubeConfig, namespace: string, files: Readonly<Record<string, string>>): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const body = { metadata: { name: EGRESS_TRUST_CONFIG_MAP, labels: { 'berth.managed': 'true' } }, data: { ...files } };
  try {
    await core.createNamespacedConfigMap({ namespace, body });
  } catch (error) {
    if (statusOf(error) !== 409) throw apiError('publish the egress CA as ConfigMap', `${namespace}/${EGRESS_TRUST_CONFIG_MAP}`, error);
    try {
      await core.replaceNamespacedConfigMap({ name: EGRESS_TRUST_CONFIG_MAP, namespace, body });
    } catch (replaceError) {
      throw apiError('replace the egress CA ConfigMap', `${namespace}/${EGRESS_TRUST_CONFIG_MAP}`, replaceError);
    }
  }
}
