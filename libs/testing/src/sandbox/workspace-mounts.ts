import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Loop workspaces stay mounted on the host until their session is deleted. A test platform that
 * leaves sessions behind calls this on its workspace directory when it stops, after its containers
 * are gone, so no mount outlives the run.
 */
export function releaseWorkspaceMounts(root: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((point): point is string => point !== undefined && point.startsWith(`${root}/`));
  for (const point of mounts) execFileSync('umount', ['--lazy', point]);
}
