import { createHash } from 'node:crypto';
import { ValidationError } from '@berth/core';
import type { SandboxInfo, SandboxSpec } from '@berth/ports';
import { EGRESS_TRUST_CONFIG_MAP } from './egress-trust';

/** `kubernetes-sigs/agent-sandbox`: the core group (`Sandbox`) and the extensions group (`SandboxTemplate`, `SandboxClaim`, `SandboxWarmPool`). */
export const AGENT_SANDBOX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes', kind: 'Sandbox' } as const;
export const AGENT_SANDBOX_EXTENSIONS = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' } as const;
/** The label carrying the Berth name of a sandbox (the container name Docker would have): a warm claim changes it. */
export const BERTH_NAME_LABEL = 'berth.name';
/** The one container of a sandbox pod. */
export const SANDBOX_CONTAINER = 'sandbox';

/** The parts of the API objects Berth reads (the Kubernetes API's own JSON field names). */
export type SandboxObject = Readonly<{
  metadata: Readonly<{ name: string; uid?: string; labels?: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>>; deletionTimestamp?: string }>;
  spec?: unknown;
  status?: Readonly<{ conditions?: readonly Readonly<{ type: string; status: string; reason?: string }>[]; nodeName?: string }>;
}>;

type ContainerState = Readonly<{
  running?: Readonly<{ startedAt?: string | Date }>;
  terminated?: Readonly<{ exitCode: number; reason?: string; startedAt?: string | Date }>;
  waiting?: Readonly<{ reason?: string }>;
}>;

export type PodObject = Readonly<{
  metadata: Readonly<{ name: string; uid?: string; labels?: Readonly<Record<string, string>>; annotations?: Readonly<Record<string, string>>; deletionTimestamp?: string | Date }>;
  status?: Readonly<{ phase?: string; containerStatuses?: readonly Readonly<{ name: string; state?: ContainerState; lastState?: ContainerState }>[] }>;
}>;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The object name of a sandbox: Kubernetes names are lowercase DNS labels and Berth's are not
 * (`berth-s-sesn_…-g1`), so a hash of the name it was created with (deterministic: a create is
 * idempotent by name); the Berth name itself is a label, changed by a warm claim.
 */
export function sandboxObjectName(berthName: string): string {
  return `berth-${createHash('sha256').update(berthName).digest('hex').slice(0, 20)}`;
}

export const isSandboxObjectName = (nameOrId: string): boolean => /^berth-[0-9a-f]{20}$/.test(nameOrId);

function quantity(bytes: number): string {
  return String(Math.max(1, Math.floor(bytes)));
}

/** How a pod reaches the egress: the egress Service's address, the only one its NetworkPolicy admits. */
export type PodEgress = Readonly<{ host: string; port: number }>;

/** The variables the sandbox's relay (PID 1, `KEEPALIVE_CMD`) reads: its loopback port and the egress it forwards to. */
const RELAY_PORT_ENV = 'BERTH_EGRESS_RELAY_PORT';
const EGRESS_TCP_ENV = 'BERTH_EGRESS_TCP';

/**
 * The `Sandbox` for a spec, hardened whatever the spec says, like the Docker runtime's containers:
 * non-root user (root refused), no privilege escalation, every capability dropped, the runtime's
 * default seccomp profile, no service-account token, no service links, no host network, limits =
 * requests. Not expressible per pod: a pids limit (the kubelet's `podPidsLimit` is per node).
 * The spec's egress becomes the relay's target: the egress Service (`egress`), instead of a socket
 * the pod cannot have, and the egress's trust ConfigMap mounted where the socket directory would
 * be; a spec with an egress but no Service configured is refused. A `volume` mount
 * is a PersistentVolumeClaim (the session's workspace). Refused: host binds (a hostPath is the
 * node) and the host network.
 */
export function sandboxResource(spec: SandboxSpec, namespace: string, egress: PodEgress | null = null): Record<string, unknown> {
  const [uid, gid] = spec.user.split(':').map((part) => Number(part));
  if (uid === undefined || !Number.isInteger(uid) || uid === 0 || (gid !== undefined && !Number.isInteger(gid))) {
    throw new ValidationError(`a Kubernetes sandbox runs as a numeric non-root uid[:gid], not ${JSON.stringify(spec.user)}`, 'user');
  }
  if (spec.network === 'host') throw new ValidationError('a Kubernetes sandbox never runs on the host network', 'network');
  if (spec.egress !== undefined && (egress === null || spec.egress.relayPort === null)) {
    throw new ValidationError('this Kubernetes runtime has no egress Service configured: a sandbox with an egress cannot be created', 'egress');
  }
  for (const mount of spec.mounts ?? []) {
    if (mount.type === 'bind') throw new ValidationError(`a Kubernetes sandbox takes no bind mount (${mount.target}): the host path would be the node's`, 'mounts');
    if (mount.type === 'volume' && (mount.source === undefined || !DNS_NAME.test(mount.source))) throw new ValidationError(`a volume mount names a PersistentVolumeClaim, not ${JSON.stringify(mount.source)}`, 'mounts');
  }
  const labels = { ...spec.labels, [BERTH_NAME_LABEL]: spec.name };
  for (const [key, value] of Object.entries(labels)) {
    if (value.length > 63 || !LABEL_VALUE.test(value)) throw new ValidationError(`label ${key}=${JSON.stringify(value)} is not a Kubernetes label value`, 'labels');
  }
  const claims = (spec.mounts ?? []).filter((m) => m.type === 'volume');
  const scratch = [...(spec.readOnlyRoot ? ['/tmp', '/home/agent', spec.workdir] : []), ...(spec.mounts ?? []).filter((m) => m.type === 'tmpfs').map((m) => m.target)].filter(
    (path) => !claims.some((c) => c.target === path),
  );
  const volumes: { volume: Record<string, unknown>; mount: Readonly<{ name: string; mountPath: string; readOnly?: boolean }> }[] = [
    ...[...new Set(scratch)].map((path, i) => ({ volume: { name: `scratch-${i}`, emptyDir: {} }, mount: { name: `scratch-${i}`, mountPath: path } })),
    ...claims.map((c, i) => ({
      volume: { name: `claim-${i}`, persistentVolumeClaim: { claimName: c.source as string, readOnly: c.readOnly === true } },
      mount: { name: `claim-${i}`, mountPath: c.target, readOnly: c.readOnly === true },
    })),
  ];
  // The egress CA where a Docker sandbox has it beside its socket (the pod's clients are told to trust it).
  if (spec.egress !== undefined) {
    volumes.push({ volume: { name: 'egress-trust', configMap: { name: EGRESS_TRUST_CONFIG_MAP } }, mount: { name: 'egress-trust', mountPath: spec.egress.mountAt, readOnly: true } });
  }
  const limits = { memory: quantity(spec.memoryBytes), cpu: `${Math.max(1, Math.round(spec.nanoCpus / 1e6))}m` };
  const relay = spec.egress !== undefined && egress !== null ? { [RELAY_PORT_ENV]: String(spec.egress.relayPort), [EGRESS_TCP_ENV]: `${egress.host}:${egress.port}` } : {};
  return {
    apiVersion: `${AGENT_SANDBOX.group}/${AGENT_SANDBOX.version}`,
    kind: AGENT_SANDBOX.kind,
    metadata: { name: sandboxObjectName(spec.name), namespace, labels },
    spec: {
      podTemplate: {
        metadata: { labels },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          hostNetwork: false,
          hostPID: false,
          hostIPC: false,
          restartPolicy: 'Never',
          securityContext: { runAsNonRoot: true, runAsUser: uid, runAsGroup: gid ?? uid, fsGroup: gid ?? uid, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: SANDBOX_CONTAINER,
              image: spec.image,
              imagePullPolicy: 'IfNotPresent',
              command: [...spec.cmd],
              workingDir: spec.workdir,
              env: Object.entries({ ...spec.env, ...relay }).map(([name, value]) => ({ name, value })),
              securityContext: { allowPrivilegeEscalation: false, privileged: false, readOnlyRootFilesystem: spec.readOnlyRoot, capabilities: { drop: ['ALL'] } },
              resources: { limits, requests: limits },
              volumeMounts: volumes.map((v) => v.mount),
            },
          ],
          volumes: volumes.map((v) => v.volume),
        },
      },
    },
  };
}

/** The typed client deserialises times into Dates, the watch hands raw JSON strings: one form out. */
function iso(value: string | Date | undefined): string | null {
  if (value === undefined) return null;
  return value instanceof Date ? value.toISOString() : value;
}

function containerState(pod: PodObject | null): ContainerState | null {
  return pod?.status?.containerStatuses?.find((c) => c.name === SANDBOX_CONTAINER)?.state ?? null;
}

/**
 * The same sandbox facts as Docker's from a Sandbox and its pod: running while the pod is
 * `Running` with its container running; an exit code once the container terminated (pod
 * `Succeeded`/`Failed`); OOM from the container's `OOMKilled`; pending, or no pod yet, is not running.
 */
export function sandboxInfoOf(sandbox: SandboxObject, pod: PodObject | null): SandboxInfo {
  const state = containerState(pod);
  const running = pod?.status?.phase === 'Running' && state?.running !== undefined && pod.metadata.deletionTimestamp === undefined;
  const terminated = state?.terminated;
  const labels = { ...(sandbox.metadata.labels ?? {}) };
  return {
    id: sandbox.metadata.name,
    name: labels[BERTH_NAME_LABEL] ?? sandbox.metadata.name,
    labels,
    running,
    exitCode: running ? null : (terminated?.exitCode ?? null),
    oomKilled: terminated?.reason === 'OOMKilled',
    startedAt: iso(state?.running?.startedAt) ?? iso(terminated?.startedAt),
  };
}

/** A pod's state as the runtime's events see it: what changed between two observations. */
export type PodPhase = 'pending' | 'running' | 'terminated';

export function podPhaseOf(pod: PodObject): PodPhase {
  const state = containerState(pod);
  if (state?.terminated !== undefined || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return 'terminated';
  if (pod.status?.phase === 'Running' && state?.running !== undefined) return 'running';
  return 'pending';
}

export function exitOf(pod: PodObject): Readonly<{ exitCode: number | null; oomKilled: boolean }> {
  const terminated = containerState(pod)?.terminated;
  return { exitCode: terminated?.exitCode ?? null, oomKilled: terminated?.reason === 'OOMKilled' };
}
