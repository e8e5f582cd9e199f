import { poolSandboxLabels, poolSandboxName, SandboxLabels, sessionSandboxLabels, sessionSandboxName } from './naming';
import type { SandboxConfig, SandboxNetwork } from './sandbox-config';

/** A mount as `SandboxMount` in `@berth/ports` has it (this module is pure and imports no ports). */
export type SandboxMountDraft = Readonly<{ type: 'volume' | 'bind' | 'tmpfs'; source?: string; target: string; readOnly?: boolean }>;

/** The session workspace a sandbox mounts (see `SessionWorkspaces`): its id is labelled on the container. */
export type WorkspaceMounts = Readonly<{ id: string; mounts: readonly SandboxMountDraft[] }>;

/** The container a sandbox runs as: same shape as `SandboxSpec` in `@berth/ports`. */
export type SandboxSpecDraft = Readonly<{
  name: string;
  image: string;
  labels: Readonly<Record<string, string>>;
  env: Readonly<Record<string, string>>;
  network: SandboxNetwork;
  user: string;
  workdir: string;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  readOnlyRoot: boolean;
  cmd: readonly string[];
  mounts: readonly SandboxMountDraft[];
}>;

/** uid/gid 1000 is the `agent` user of the harness image; numeric so images without it still work. */
export const SANDBOX_USER = '1000:1000';
export const SANDBOX_HOME = '/home/agent';
export const SANDBOX_WORKDIR = '/workspace';
/** PID 1 that exits promptly on SIGTERM (a bare `sleep` as PID 1 ignores it and stop waits). */
export const KEEPALIVE_CMD: readonly string[] = ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"];

function baseSpec(name: string, labels: Record<string, string>, config: SandboxConfig, workspace: WorkspaceMounts): SandboxSpecDraft {
  return {
    name,
    image: config.image,
    labels: { ...labels, [SandboxLabels.workspace]: workspace.id },
    env: { HOME: SANDBOX_HOME },
    network: config.network,
    user: SANDBOX_USER,
    workdir: SANDBOX_WORKDIR,
    memoryBytes: config.memoryBytes,
    nanoCpus: config.nanoCpus,
    pidsLimit: config.pidsLimit,
    readOnlyRoot: config.readOnlyRoot,
    cmd: KEEPALIVE_CMD,
    mounts: workspace.mounts,
  };
}

export function sessionSandboxSpec(input: {
  sessionId: string;
  generation: number;
  environmentId: string;
  config: SandboxConfig;
  workspace: WorkspaceMounts;
}): SandboxSpecDraft {
  return baseSpec(
    sessionSandboxName(input.sessionId, input.generation),
    sessionSandboxLabels(input.sessionId, input.generation, input.environmentId),
    input.config,
    input.workspace,
  );
}

/**
 * A short fingerprint of what a container is started with (image, network, limits, root mode):
 * a warm container made for an older config of its environment is never handed out. FNV-1a, not
 * a security hash: it only has to tell configs apart.
 */
export function sandboxConfigFingerprint(config: SandboxConfig): string {
  const text = JSON.stringify([config.image, config.network, config.memoryBytes, config.nanoCpus, config.pidsLimit, config.readOnlyRoot, config.workspaceBytes]);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

export function poolSandboxSpec(input: { environmentId: string; slot: string; config: SandboxConfig; workspace: WorkspaceMounts }): SandboxSpecDraft {
  const labels = { ...poolSandboxLabels(input.environmentId), [SandboxLabels.poolSpec]: sandboxConfigFingerprint(input.config) };
  return baseSpec(poolSandboxName(input.environmentId, input.slot), labels, input.config, input.workspace);
}
