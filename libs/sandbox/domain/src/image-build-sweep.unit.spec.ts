import { abandonedBuilds, ABANDONED_BUILD_GRACE_MS, type BuildContainer, type BuildLease } from './image-build-sweep';

const now = new Date('2026-03-01T12:00:00.000Z');
const ago = (ms: number) => new Date(now.getTime() - ms).toISOString();
const build = (id: string, lease = `lease-${id}`): BuildContainer => ({ id, lease });

/** Given the engine's build containers and the store's leases by name, when a sweep runs at `at`: the ids it removes. */
const given = (builds: readonly BuildContainer[], leases: Readonly<Record<string, BuildLease | null>>) => ({
  whenSweptAt: (at: Date) => abandonedBuilds({ builds, leases: new Map(Object.entries(leases)), now: at }),
});

describe('the image build containers a sweep removes', () => {
  it('removes a container whose lease was released: its builder is done, the container is a leftover', () => {
    expect(given([build('a')], { 'lease-a': null }).whenSweptAt(now)).toEqual(['a']);
  });

  it('removes a container whose lease expired the grace ago or more: its builder is dead', () => {
    const removed = given([build('at-grace'), build('past-grace')], { 'lease-at-grace': { expires_at: ago(ABANDONED_BUILD_GRACE_MS) }, 'lease-past-grace': { expires_at: ago(10 * ABANDONED_BUILD_GRACE_MS) } }).whenSweptAt(now);
    expect(removed).toEqual(['at-grace', 'past-grace']);
  });

  it('keeps a container whose builder holds its lease', () => {
    expect(given([build('live')], { 'lease-live': { expires_at: ago(-4_000) } }).whenSweptAt(now)).toEqual([]);
  });

  it('keeps a container whose lease expired within the grace (a builder whose renewals were late)', () => {
    expect(given([build('late')], { 'lease-late': { expires_at: ago(ABANDONED_BUILD_GRACE_MS - 1) } }).whenSweptAt(now)).toEqual([]);
  });

  it('keeps a container whose lease was not looked up', () => {
    expect(given([build('unknown')], {}).whenSweptAt(now)).toEqual([]);
  });

  it("judges every container of one lease alike: a dead builder's leftover waits while a live builder holds the tag's lease, and goes once it is released", () => {
    const builds = [build('dead', 'lease-tag'), build('live', 'lease-tag')];
    expect(given(builds, { 'lease-tag': { expires_at: ago(-4_000) } }).whenSweptAt(now)).toEqual([]);
    expect(given(builds, { 'lease-tag': null }).whenSweptAt(now)).toEqual(['dead', 'live']);
  });

  it('removes a lapsed lease\'s container once the grace has passed, not before', () => {
    const lapsed = given([build('a')], { 'lease-a': { expires_at: now.toISOString() } });
    expect(lapsed.whenSweptAt(new Date(now.getTime() + ABANDONED_BUILD_GRACE_MS - 1))).toEqual([]);
    expect(lapsed.whenSweptAt(new Date(now.getTime() + ABANDONED_BUILD_GRACE_MS))).toEqual(['a']);
  });
});
