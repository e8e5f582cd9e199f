/**
 * What building an environment image through the egress costs, as sandboxes are built (network
 * `none`, the relay, the real egress; nothing on the host network). Each round makes fresh
 * packages (one npm, one apt when dpkg-dev and gpg are here) in a registry and a signed repository
 * on loopback, served under public-looking names by the test upstream proxy, and builds them with
 * `DockerSandboxImages`. Printed, median and max over the rounds: the first build, the install
 * steps inside it (the raw work, timed from its progress lines), their ratio, and reuse (the image exists).
 *
 *   node -r @swc-node/register bench/image-build.ts [rounds]
 *
 * Traffic stays on this machine; the images it builds are removed.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import type { EnvironmentPackages } from '@berth/contracts';
import { DockerSandboxImages, dockerFromHost } from '@berth/docker';
import { packageImageRecipe, type ImageRecipeDraft } from '@berth/sandbox-domain';
import { systemClock } from '@berth/core';
import { LeaseLock } from '@berth/sandbox-lifecycle';
import { canMakeAptRepository, ensureDockerTestEngine, MemoryLeases, ScriptedUpstreamProxy, TestAptRepository, TestNpmRegistry } from '@berth/testing';
import { EgressHarness } from '../apps/egress/test/egress-harness';

const ROUNDS = Math.min(Number(process.argv[2] ?? 3), 20);
const NONE: EnvironmentPackages = { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };
const median = (v: readonly number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const engine = ensureDockerTestEngine({ harness: true });
  const docker = dockerFromHost(engine.dockerHost);
  const base = engine.harnessImage as string;
  const withApt = canMakeAptRepository();
  const times = { build: [] as number[], steps: [] as number[], reuse: [] as number[] };
  const images: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const run = randomBytes(4).toString('hex');
    const npmPackage = { name: `berth-bench-${run}`, version: '1.0.0', bin: `berth-bench-${run}`, prints: run };
    const npm = await new TestNpmRegistry('http://registry.npm.test', [npmPackage]).start();
    const apt = withApt ? await new TestAptRepository([{ name: `berth-bench-apt-${run}`, version: '1.0', prints: run }]).start() : null;
    const upstream = await new ScriptedUpstreamProxy({ 'registry.npm.test': { origin: npm.files.origin }, ...(apt === null ? {} : { 'apt.mirror.test': { origin: apt.files.origin } }) }).start();
    const egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url }).start();
    try {
      const recipe = (over: string) =>
        packageImageRecipe({
          base,
          packages: { ...NONE, npm: [npmPackage.name], apt: apt === null ? [] : [`berth-bench-apt-${run}`] },
          environmentId: `env_bench${over}`,
          allowedHosts: [],
          mirrors: { apt: apt === null ? null : { url: 'http://apt.mirror.test/', keyBase64: apt.key.toString('base64') }, npm: 'http://registry.npm.test/', pip: null },
        }) as ImageRecipeDraft;

      const built = new DockerSandboxImages(docker, { egressRoot: egress.root, caCertificatesDir: null, scopeLabels: { 'berth.scope': `bench-${run}` }, lock: new LeaseLock(new MemoryLeases(), 'bench', systemClock) });
      // The install steps' own time: from the first step's announcement to the last line a step printed.
      let stepsFrom = 0;
      let lastLine = 0;
      const first = await built.ensure(recipe('a'), (line) => {
        if (stepsFrom === 0 && line.startsWith('Step 1/')) stepsFrom = Date.now();
        lastLine = Date.now();
      });
      images.push(first.image);
      times.build.push(first.seconds);
      times.steps.push((lastLine - stepsFrom) / 1000);
      times.reuse.push((await built.ensure(recipe('a'))).seconds);
    } finally {
      await egress.stop();
      await Promise.all([upstream.close(), npm.close(), apt?.close()]);
    }
  }
  for (const image of images) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
  const row = (name: string, v: number[]) => console.log(`${name.padEnd(44)} median ${median(v).toFixed(2)} s   max ${Math.max(...v).toFixed(2)} s`);
  console.log(`image build, ${ROUNDS} round(s), npm 1${withApt ? ' + apt 1' : ''} package(s) on ${base}, load average ${loadavg()[0]?.toFixed(1)}`);
  row('first build through the egress', times.build);
  row('  of which the install steps (the raw work)', times.steps);
  row('reuse (image inspect)', times.reuse);
  console.log(`first build / its install steps at the median: ${(median(times.build) / median(times.steps)).toFixed(2)}× (the rest: the build container, its relay and egress directory, the commit)`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
