/**
 * What building an environment image through the egress costs, against the way it was built
 * before (`docker build` on the host network), same packages, same registries, one run. Each round
 * makes fresh packages (one npm, one apt when dpkg-dev and gpg are here) in a registry and a
 * signed repository on loopback, served under public-looking names by the test upstream proxy:
 * - before: the same steps as `RUN` lines of a Dockerfile on `--network host`, the package
 *   managers pointed at the upstream proxy directly (no egress, no build container);
 * - after: `DockerSandboxImages` (a sandbox-like container, the relay, the real egress, commit).
 * Printed: first build and reuse (the image exists) for each, median and max over the rounds.
 *
 *   node -r @swc-node/register bench/image-build.ts [rounds]
 *
 * Traffic stays on this machine; the images it builds are removed.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { loadavg } from 'node:os';
import type { EnvironmentPackages } from '@berth/contracts';
import { DockerSandboxImages, dockerFromHost } from '@berth/docker';
import { packageImageRecipe, type ImageRecipeDraft } from '@berth/sandbox-domain';
import { systemClock } from '@berth/core';
import { LeaseLock } from '@berth/sandbox-lifecycle';
import { canMakeAptRepository, ensureDockerTestEngine, MemoryLeases, ScriptedUpstreamProxy, TestAptRepository, TestNpmRegistry } from '@berth/testing';
import { packFiles } from '../libs/infra/docker/src/tar';
import { EgressHarness } from '../apps/egress/test/egress-harness';

const ROUNDS = Math.min(Number(process.argv[2] ?? 3), 20);
const NONE: EnvironmentPackages = { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };
const median = (v: readonly number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const engine = ensureDockerTestEngine({ harness: true });
  const docker = dockerFromHost(engine.dockerHost);
  const base = engine.harnessImage as string;
  const withApt = canMakeAptRepository();
  const times = { before: [] as number[], beforeReuse: [] as number[], after: [] as number[], afterReuse: [] as number[] };
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

      // Before: docker build on the host network, the proxy variables pointing at the upstream itself.
      const tag = `berth/bench-before:${run}`;
      const before = recipe('b');
      const proxied = { ...before.env, ...Object.fromEntries(['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'].map((k) => [k, upstream.url])) };
      const dockerfile = [
        `FROM ${base}`,
        'USER root',
        // One COPY per file: copying a tree onto / would give /tmp the context's mode.
        ...before.files.map((f) => `COPY build${f.path} ${f.path}`),
        ...Object.entries(proxied).map(([k, v]) => `ARG ${k}=${v}`),
        ...before.steps.map((argv) => `RUN ${JSON.stringify(argv)}`),
        'RUN ["rm", "-rf", "/tmp/berth-build"]',
        'USER 1000:1000',
        '',
      ].join('\n');
      const context = packFiles([{ name: 'Dockerfile', data: Buffer.from(dockerfile) }, { name: 'build/.keep', data: Buffer.alloc(0) }, ...before.files.map((f) => ({ name: `build${f.path}`, data: Buffer.from(f.base64, 'base64') }))]);
      let started = Date.now();
      const stream = await docker.buildImage(Readable.from([context]), { t: tag, networkmode: 'host', rm: true, forcerm: true });
      await new Promise<void>((resolve, reject) =>
        docker.modem.followProgress(stream, (error: Error | null, out: { error?: string; stream?: string }[]) => {
          const failed = error?.message ?? out.find((m) => m.error !== undefined)?.error;
          return failed === undefined ? resolve() : reject(new Error(`${failed}\n${out.map((m) => m.stream ?? '').join('').slice(-1500)}`));
        }),
      );
      times.before.push((Date.now() - started) / 1000);
      images.push(tag);
      started = Date.now();
      await docker.getImage(tag).inspect();
      times.beforeReuse.push((Date.now() - started) / 1000);

      // After: through the egress.
      const built = new DockerSandboxImages(docker, { egressRoot: egress.root, caCertificatesDir: null, scopeLabels: { 'berth.scope': `bench-${run}` }, lock: new LeaseLock(new MemoryLeases(), 'bench', systemClock) });
      const first = await built.ensure(recipe('a'));
      images.push(first.image);
      times.after.push(first.seconds);
      times.afterReuse.push((await built.ensure(recipe('a'))).seconds);
    } finally {
      await egress.stop();
      await Promise.all([upstream.close(), npm.close(), apt?.close()]);
    }
  }
  for (const image of images) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
  const row = (name: string, v: number[]) => console.log(`${name.padEnd(44)} median ${median(v).toFixed(2)} s   max ${Math.max(...v).toFixed(2)} s`);
  console.log(`image build, ${ROUNDS} round(s), npm 1${withApt ? ' + apt 1' : ''} package(s) on ${base}, load average ${loadavg()[0]?.toFixed(1)}`);
  row('before: docker build --network host, first', times.before);
  row('before: reuse (image inspect)', times.beforeReuse);
  row('after: through the egress, first', times.after);
  row('after: reuse (image inspect)', times.afterReuse);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
