import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { hostname } from 'node:os';
import { promisify } from 'node:util';
import type Docker from 'dockerode';

const run = promisify(execFile);

/**
 * `loop` when this process can give workspaces a real size limit: Linux, root, `mount` and
 * `mkfs.ext4` on PATH, and the engine on this very host (same host name, its data root visible
 * here), so a filesystem this process mounts is one the engine can bind. Otherwise `volume`
 * (Docker Desktop, a remote engine, a manager in a container or not root). The reason says why.
 */
export async function detectWorkspaceKind(docker: Docker): Promise<{ kind: 'loop' | 'volume'; reason: string }> {
  if (process.platform !== 'linux') return { kind: 'volume', reason: `this host is ${process.platform}, not Linux` };
  if (process.getuid?.() !== 0) return { kind: 'volume', reason: 'the sandbox-manager does not run as root (loop mounts need it)' };
  for (const tool of ['mount', 'umount', 'mkfs.ext4']) {
    if (!(await run('sh', ['-c', `command -v ${tool}`]).then(() => true, () => false))) return { kind: 'volume', reason: `${tool} is not installed` };
  }
  const info = (await docker.info()) as { Name?: string; DockerRootDir?: string };
  if (info.Name !== hostname()) return { kind: 'volume', reason: `the Docker engine runs on another host (${info.Name ?? 'unknown'})` };
  if (!info.DockerRootDir || !(await access(info.DockerRootDir).then(() => true, () => false))) {
    return { kind: 'volume', reason: "the engine's data root is not visible here (another mount namespace)" };
  }
  return { kind: 'loop', reason: 'root on the engine host: one ext4 image per workspace, loop-mounted' };
}
