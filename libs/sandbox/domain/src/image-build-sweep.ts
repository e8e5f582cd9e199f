/** An image build's container as the engine lists it, with the store lease its builder holds while it builds (`ImageBuildContainer` in `@berth/ports`). */
export type BuildContainer = Readonly<{ id: string; lease: string }>;

/** The part of a store lease the sweep reads (`Lease` in `@berth/ports`): until when its holder has it. */
export type BuildLease = Readonly<{ expires_at: string }>;

/**
 * How long after its build lease expired a build container is left alone. A live builder renews
 * its lease every few seconds (`LeaseLock`: 5 s, renewed every third of it), so a lease that lapsed
 * this long ago is a dead builder's; the margin covers a builder whose renewals were late (a
 * loaded host, a slow store).
 */
export const ABANDONED_BUILD_GRACE_MS = 60_000;

/**
 * The build containers a sweep removes: those whose lease is released (null: its builder is done,
 * so the container is a leftover) or expired at least `ABANDONED_BUILD_GRACE_MS` before `now`. A
 * builder creates its container only while it holds the lease, so a live build is never among
 * them. A container whose lease was not looked up is kept.
 */
export function abandonedBuilds(input: {
  builds: readonly BuildContainer[];
  /** By lease name: the lease as stored, null when released or never taken. */
  leases: ReadonlyMap<string, BuildLease | null>;
  now: Date;
}): string[] {
  const cutoff = input.now.getTime() - ABANDONED_BUILD_GRACE_MS;
  const lapsed = (name: string): boolean => {
    const lease = input.leases.get(name);
    if (lease === undefined) return false;
    return lease === null || Date.parse(lease.expires_at) <= cutoff;
  };
  return input.builds.filter((b) => lapsed(b.lease)).map((b) => b.id);
}
