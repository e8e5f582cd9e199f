import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EGRESS_NAME_FILE } from '@berth/docker';
import type { SandboxNames } from './sandbox-contexts';

/** Docker sandboxes: the `name` file of the egress directory the socket is in (the manager's runtime writes it, out of the sandbox's reach). */
export function directoryNames(root: string): SandboxNames {
  return {
    async nameOf(dirId) {
      try {
        return { name: (await readFile(join(root, dirId, EGRESS_NAME_FILE), 'utf8')).trim() };
      } catch {
        return { unbound: 'this sandbox has no record in the egress directory' };
      }
    },
  };
}
