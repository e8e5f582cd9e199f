import { FixedClock } from '@berth/core/testing';
import type { ImageBuildContainer, SandboxImages } from '@berth/ports';
import { ABANDONED_BUILD_GRACE_MS } from '@berth/sandbox-domain';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the in-memory leases live in the testing library
import { MemoryLeases } from '@berth/testing';
import { sweepImageBuilds } from './image-build-sweep';
import { MultiHostSandboxImages } from './multi-host-images';

/** One engine's build containers: `removeBuild` takes them away. */
function engine(builds: ImageBuildContainer[]): SandboxImages & { left: () => string[] } {
  const live = [...builds];
  return {
    ensure: () => Promise.reject(new Error('not built here')),
    builds: async () => [...live],
    removeBuild: async (id) => {
      const at = live.findIndex((b) => b.id === id);
      if (at >= 0) live.splice(at, 1);
    },
    left: () => live.map((b) => b.id),
  };
}

describe('the image build sweep', () => {
  it("removes, on each host, the builds whose lease lapsed the grace ago, and not a build whose builder holds its lease", async () => {
    // Given two hosts: a's dead builder's container and a live builder's, b's container of a builder that released its lease.
    const clock = new FixedClock(new Date('2026-03-01T12:00:00Z'));
    const leases = new MemoryLeases();
    await leases.acquire('dead', 'manager-1', clock.now(), 5_000);
    await leases.acquire('released', 'manager-2', clock.now(), 5_000);
    await leases.release('released', 'manager-2');
    clock.advance(5_000 + ABANDONED_BUILD_GRACE_MS);
    await leases.acquire('live', 'manager-3', clock.now(), 5_000);
    const a = engine([
      { id: 'c-dead', lease: 'dead' },
      { id: 'c-live', lease: 'live' },
    ]);
    const b = engine([{ id: 'c-released', lease: 'released' }]);
    const images = new MultiHostSandboxImages([
      { name: 'host/a', images: a },
      { name: 'b', images: b },
    ]);

    // When the sweep runs.
    const removed = await sweepImageBuilds({ images, leases, clock });

    // Then each leftover is removed on its own host, and the live build is left.
    expect(removed).toEqual(['host/a/c-dead', 'b/c-released']);
    expect(a.left()).toEqual(['c-live']);
    expect(b.left()).toEqual([]);
  });

  it('keeps a build whose lease lapsed within the grace', async () => {
    // Given a builder whose lease expired a moment ago.
    const clock = new FixedClock(new Date('2026-03-01T12:00:00Z'));
    const leases = new MemoryLeases();
    await leases.acquire('late', 'manager-1', clock.now(), 5_000);
    clock.advance(5_001);
    const images = engine([{ id: 'c-late', lease: 'late' }]);

    // When the sweep runs, then it removes nothing.
    expect(await sweepImageBuilds({ images, leases, clock })).toEqual([]);
    expect(images.left()).toEqual(['c-late']);
  });
});
