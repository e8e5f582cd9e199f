import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EGRESS_BUILD_GRANT_FILE, EGRESS_NAME_FILE } from '@berth/docker';
import { imageBuildGrantFrom } from '@berth/egress-domain';
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
    // A build's directory holds its grant (written by the sandbox-manager before the container existed); a sandbox's has none.
    async buildGrantOf(dirId) {
      let text: string;
      try {
        text = await readFile(join(root, dirId, EGRESS_BUILD_GRANT_FILE), 'utf8');
      } catch {
        return null;
      }
      try {
        return imageBuildGrantFrom(JSON.parse(text)) ?? { unbound: 'its grant names no environment' };
      } catch {
        return { unbound: 'its grant is not JSON' };
      }
    },
  };
}
