import type { Clock } from '@berth/core';
import type { Leases, SandboxImages } from '@berth/ports';
import { abandonedBuilds } from '@berth/sandbox-domain';

/**
 * Removes the image build containers (with their egress directories) that dead sandbox-managers
 * left behind: those `abandonedBuilds` picks, given each one's build lease as the store has it
 * now. A live builder on any manager holds its lease, so its container is never among them; the
 * containers are listed before the leases are read, so a build started meanwhile is not either.
 * Run by every sandbox-manager at start and at each pool sweep. Returns the ids removed.
 */
export async function sweepImageBuilds(input: {
  images: Pick<SandboxImages, 'builds' | 'removeBuild'>;
  leases: Pick<Leases, 'get'>;
  clock: Clock;
}): Promise<string[]> {
  const builds = await input.images.builds();
  if (builds.length === 0) return [];
  const names = [...new Set(builds.map((b) => b.lease))];
  const leases = new Map(await Promise.all(names.map(async (name) => [name, await input.leases.get(name)] as const)));
  const abandoned = abandonedBuilds({ builds, leases, now: input.clock.now() });
  for (const id of abandoned) await input.images.removeBuild(id);
  return abandoned;
}
