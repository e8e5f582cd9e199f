import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EnvironmentPackages } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { DockerSandboxImages, dockerFromHost, EGRESS_BUILD_GRANT_FILE } from '@berth/docker';
import { LeaseLock } from '@berth/sandbox-lifecycle';
import { NO_MIRRORS, packageImageRecipe, type PackageMirrors } from '@berth/sandbox-domain';
import { AnthropicMessagesServer, canMakeAptRepository, ensureDockerTestEngine, MemoryLeases, ScriptedUpstreamProxy, TestAptRepository, TestNpmRegistry } from '@berth/testing';
import { connectVia, EgressHarness, viaSocket } from './egress-harness';

jest.setTimeout(10 * 60_000);

/** A listener on the host's loopback that counts who connects (nothing may). */
async function loopbackListener(): Promise<{ server: Server; port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port, connections: () => count };
}

describe('an image build through the egress: its own policy', () => {
  let upstream: ScriptedUpstreamProxy;
  let model: AnthropicMessagesServer;
  let egress: EgressHarness;
  const grant = { environmentId: 'env_b1', ecosystems: ['npm'], allowedHosts: ['mirror.build.test'] };

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    upstream = await new ScriptedUpstreamProxy({ 'mirror.build.test': { body: 'from the mirror\n' }, 'evil.test': { body: 'must never be served\n' } }).start();
    egress = await new EgressHarness({ model: { baseUrl: model.url, trustedHosts: [] }, keys: { BERTH_MODEL_API_KEY: 'sk-real' }, upstreamProxy: upstream.url, buildMirrorHosts: ['10.9.8.7'] }).start();
  });
  afterAll(async () => {
    await egress?.stop();
    await Promise.all([upstream?.close(), model?.close()]);
  });

  it('reaches its allowed hosts and its ecosystems\' registries, by plain HTTP and CONNECT', async () => {
    const { socket } = await egress.build(grant);
    expect(await viaSocket(socket, 'http://mirror.build.test/x')).toMatchObject({ status: 200, body: 'from the mirror\n' });
    expect((await connectVia(socket, 'mirror.build.test:443')).tunnelled).toContain('from the mirror');
    // Allowed by the grant: the egress passes it on (the test's upstream serves no such host and connects nowhere).
    expect((await viaSocket(socket, 'http://registry.npmjs.org/cowsay')).status).toBe(502);
    expect(upstream.requests.map((r) => r.host)).toEqual(expect.arrayContaining(['mirror.build.test', 'registry.npmjs.org']));
  });

  it('is refused any other host with words naming what it may reach, recorded for the build and never for a session', async () => {
    const { socket, id } = await egress.build(grant);
    const seen = upstream.requests.length;
    const plain = await viaSocket(socket, 'http://evil.test/payload');
    expect(plain.status).toBe(403);
    expect(plain.headers['x-berth-egress-denied']).toBe('host_not_allowed');
    expect(plain.body).toContain('Berth egress refused evil.test:80: the image build of environment env_b1 reaches only the package registries of its packages');
    expect((await connectVia(socket, 'pypi.org:443')).status).toBe(403);
    expect(upstream.requests.slice(seen)).toEqual([]);
    expect(egress.bus.dispatched).toEqual([]);
    const recorded = await egress.dirs.buildDenials(id);
    expect(recorded).toHaveLength(2);
    expect(recorded[0]).toContain('Berth egress refused evil.test:80');
    expect(recorded[1]).toContain('Berth egress refused pypi.org:443');
  });

  it('never reaches this machine or private networks, even a host its grant names', async () => {
    const listener = await loopbackListener();
    try {
      const { socket } = await egress.build({ ...grant, allowedHosts: ['127.0.0.1', '10.20.30.40', 'registry.localhost'] });
      const loopback = await viaSocket(socket, `http://127.0.0.1:${listener.port}/`);
      expect(loopback).toMatchObject({ status: 403, headers: expect.objectContaining({ 'x-berth-egress-denied': 'platform_address' }) });
      expect(loopback.body).toContain(`Berth egress refused 127.0.0.1:${listener.port} (loopback): sandboxes never reach this machine`);
      expect((await connectVia(socket, '10.20.30.40:443')).status).toBe(403);
      expect((await viaSocket(socket, `http://registry.localhost:${listener.port}/`)).status).toBe(403);
      expect(listener.connections()).toBe(0);
    } finally {
      listener.server.close();
    }
  });

  it('reaches the operator\'s trusted mirror at its private address, and a sandbox gains nothing from it', async () => {
    const build = await egress.build({ ...grant, allowedHosts: ['10.9.8.7'] });
    // Passed on: the test's upstream answers 502 and connects nowhere.
    expect((await connectVia(build.socket, '10.9.8.7:443')).status).toBe(502);
    expect(upstream.requests.at(-1)).toMatchObject({ kind: 'connect', host: '10.9.8.7', port: 443 });
    const { socket } = await egress.sandbox({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['10.9.8.7'] } });
    const refused = await connectVia(socket, '10.9.8.7:443');
    expect(refused).toMatchObject({ status: 403, headers: expect.objectContaining({ 'x-berth-egress-denied': 'platform_address' }) });
  });

  it('reaches no model, and a directory whose grant cannot be read gets nothing', async () => {
    const { socket } = await egress.build(grant);
    const before = model.modelRequests.length;
    const answer = await viaSocket(socket, '/v1/messages', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(answer).toMatchObject({ status: 403, body: expect.stringContaining('an image build reaches no model endpoint') });
    expect(model.modelRequests.length).toBe(before);

    for (const text of ['{not json', JSON.stringify({ ecosystems: ['npm'], allowed_hosts: ['mirror.build.test'] })]) {
      const broken = await egress.build(grant);
      writeFileSync(join(egress.root, broken.id, EGRESS_BUILD_GRANT_FILE), text);
      expect(await viaSocket(broken.socket, 'http://mirror.build.test/x')).toMatchObject({ status: 403, headers: expect.objectContaining({ 'x-berth-egress-denied': 'unbound_sandbox' }) });
    }
  });
});

const NONE: EnvironmentPackages = { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };

describe('DockerSandboxImages on the real engine, through the real egress, from registries on loopback', () => {
  const engine = ensureDockerTestEngine({ harness: true });
  const docker = dockerFromHost(engine.dockerHost);
  const run = randomBytes(4).toString('hex');
  const npmPackage = { name: `berth-hello-${run}`, version: '1.0.0', bin: `berth-hello-${run}`, prints: `hello from the test npm registry ${run}` };
  const aptPackage = { name: `berth-hello-apt-${run}`, version: '1.0', prints: `hello from the test apt repository ${run}` };
  const withApt = canMakeAptRepository();
  let upstream: ScriptedUpstreamProxy;
  let npm: TestNpmRegistry;
  let apt: TestAptRepository | null = null;
  let egress: EgressHarness;
  let images: DockerSandboxImages;
  let mirrors: PackageMirrors;
  const built: string[] = [];

  beforeAll(async () => {
    npm = await new TestNpmRegistry('http://registry.npm.test', [npmPackage]).start();
    if (withApt) apt = await new TestAptRepository([aptPackage]).start();
    upstream = await new ScriptedUpstreamProxy({
      'registry.npm.test': { origin: npm.files.origin },
      ...(apt === null ? {} : { 'apt.mirror.test': { origin: apt.files.origin } }),
    }).start();
    egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url }).start();
    images = new DockerSandboxImages(docker, { egressRoot: egress.root, caCertificatesDir: null, scopeLabels: { 'berth.scope': `image-builds-${run}` }, lock: new LeaseLock(new MemoryLeases(), 'test', systemClock) });
    mirrors = { apt: apt === null ? null : { url: 'http://apt.mirror.test/', keyBase64: apt.key.toString('base64') }, npm: 'http://registry.npm.test/', pip: null };
  });
  // The engine is shared: remove the images this run built, nothing else.
  afterAll(async () => {
    for (const image of built) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
    await egress?.stop();
    await Promise.all([upstream?.close(), npm?.close(), apt?.close()]);
  });

  const recipe = (packages: Partial<EnvironmentPackages>, over: Partial<{ mirrors: PackageMirrors; allowedHosts: string[]; base: string }> = {}) => {
    const r = packageImageRecipe({ base: over.base ?? (engine.harnessImage as string), packages: { ...NONE, ...packages }, environmentId: 'env_img', allowedHosts: over.allowedHosts ?? [], mirrors: over.mirrors ?? mirrors });
    if (r === null) throw new Error('no recipe');
    return r;
  };

  /** Runs `cmd` in a throwaway container of `image` (no network) and returns its output. */
  async function output(image: string, cmd: string[]): Promise<string> {
    const container = await docker.createContainer({ Image: image, Cmd: cmd, name: `berth-imgtest-${run}-${randomBytes(3).toString('hex')}`, HostConfig: { NetworkMode: 'none' } });
    try {
      await container.start();
      await container.wait();
      const logs = await container.logs({ stdout: true, stderr: true });
      const frames: string[] = [];
      for (let at = 0; at + 8 <= logs.length; ) {
        const size = logs.readUInt32BE(at + 4);
        frames.push(logs.subarray(at + 8, at + 8 + size).toString('utf8'));
        at += 8 + size;
      }
      return frames.join('');
    } finally {
      await container.remove({ force: true });
    }
  }

  it('installs npm and apt packages from the mirrors into an image named by its inputs, with the base image\'s config, and reuses it', async () => {
    if (!withApt) console.log('dpkg-deb, dpkg-scanpackages or gpg is missing: the apt mirror is not exercised here');
    const r = recipe({ npm: [npmPackage.name], apt: withApt ? [aptPackage.name] : [] });
    const first = await images.ensure(r);
    built.push(first.image);
    console.log(`environment image through the egress: first ensure (build) ${first.seconds.toFixed(1)} s, image ${first.image}`);
    expect(first).toMatchObject({ image: expect.stringMatching(/^berth\/env:[0-9a-f]{16}$/), built: true });
    expect((await output(first.image, [npmPackage.bin])).trim()).toBe(npmPackage.prints);
    if (withApt) expect((await output(first.image, [aptPackage.name])).trim()).toBe(aptPackage.prints);
    // The image is the base image's again: uid 1000, its workdir and command; nothing of the build's variables, files or apt sources.
    const config = (await docker.getImage(first.image).inspect()).Config;
    const base = (await docker.getImage(engine.harnessImage as string).inspect()).Config;
    expect(config).toMatchObject({ User: '1000:1000', WorkingDir: base.WorkingDir, Cmd: base.Cmd, Labels: expect.objectContaining({ 'berth.image': 'environment' }) });
    expect(config.Env).toEqual(base.Env);
    const leftovers = ['/bin/sh', '-c', 'ls -A /tmp; cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null; ls /etc/apt/trusted.gpg.d'];
    expect(await output(first.image, leftovers)).toBe(await output(engine.harnessImage as string, leftovers));
    // Every request went to the test's named registries, through the egress and its upstream.
    expect(new Set(upstream.requests.map((q) => q.host))).toEqual(new Set(['registry.npm.test', ...(withApt ? ['apt.mirror.test'] : [])]));
    expect(npm.files.requests.some((q) => q.path.endsWith('.tgz') && q.status === 200)).toBe(true);
    // No build container or egress directory is left.
    expect(await docker.listContainers({ all: true, filters: { label: [`berth.image-build`] } }).then((cs) => cs.filter((c) => c.Labels['berth.image-build'] === first.image.split(':')[1]))).toEqual([]);

    const second = await images.ensure(r);
    console.log(`environment image through the egress: second ensure (reuse) ${second.seconds.toFixed(2)} s`);
    expect(second).toMatchObject({ image: first.image, built: false });
  });

  it('fails with the egress\'s words when a package source names a host outside the build\'s policy, which is never reached', async () => {
    const seen = upstream.requests.length;
    const r = recipe({ npm: [npmPackage.name] }, { mirrors: { ...NO_MIRRORS, npm: 'http://registry.npm.test/' }, allowedHosts: [] });
    // The same recipe pointed at a host the grant lacks (the mirror host is granted only when it is the mirror).
    const evil = { ...r, env: { ...r.env, npm_config_registry: 'http://evil.test/' } };
    await expect(images.ensure(evil)).rejects.toMatchObject({ code: 'SANDBOX_IMAGE_BUILD_FAILED', message: expect.stringContaining('Berth egress refused evil.test:80: the image build of environment env_img reaches only') });
    expect(upstream.requests.slice(seen).filter((q) => q.host === 'evil.test')).toEqual([]);
  });

  it('cannot reach the host\'s loopback: a listener the test opened sees no connection', async () => {
    const listener = await loopbackListener();
    try {
      const r = recipe({ npm: [npmPackage.name] }, { allowedHosts: ['::ffff:7f00:1', 'registry.berth.internal'] });
      // Loopback spelled so that NO_PROXY does not match (npm would try the container's own loopback,
      // which is not the host's): an IPv4-mapped IPv6 literal, and a name of this machine. Both are
      // granted, so what refuses them is the platform rule.
      for (const registry of [`http://[::ffff:127.0.0.1]:${listener.port}/`, `http://registry.berth.internal:${listener.port}/`]) {
        const loopback = { ...r, env: { ...r.env, npm_config_registry: registry } };
        await expect(images.ensure(loopback)).rejects.toMatchObject({
          code: 'SANDBOX_IMAGE_BUILD_FAILED',
          message: expect.stringMatching(new RegExp(`Berth egress refused \\S+:${listener.port}.*sandboxes never reach this machine`)),
        });
      }
      expect(listener.connections()).toBe(0);
    } finally {
      listener.server.close();
    }
  });

  it('says so when the base image has no socat (no relay, no way out)', async () => {
    await expect(images.ensure(recipe({ npm: [npmPackage.name] }, { base: engine.baseImage }))).rejects.toMatchObject({ code: 'SANDBOX_IMAGE_BUILD_FAILED', message: expect.stringContaining(`the base image ${engine.baseImage} has no socat`) });
  });
});
