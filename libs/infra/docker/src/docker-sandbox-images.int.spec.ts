import { randomBytes } from 'node:crypto';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { ensureDockerTestEngine } from '@berth/testing';
import { dockerFromHost } from './docker-sandbox-runtime';
import { DockerSandboxImages } from './docker-sandbox-images';

jest.setTimeout(10 * 60_000);

const engine = ensureDockerTestEngine();
const docker = dockerFromHost(engine.dockerHost);
const images = new DockerSandboxImages(docker, { network: 'host', caCertificatesDir: '/usr/local/share/ca-certificates' });
const run = randomBytes(4).toString('hex');
const built: string[] = [];

// The engine is shared: remove the images this run built, nothing else.
afterAll(async () => {
  for (const image of built) await docker.getImage(image).remove({ force: true }).catch(() => undefined);
});

/** Runs `cmd` in a throwaway container of `image` and returns its output. */
async function output(image: string, cmd: string[]): Promise<string> {
  const container = await docker.createContainer({ Image: image, Cmd: cmd, name: `berth-imgtest-${run}-${randomBytes(3).toString('hex')}`, HostConfig: { NetworkMode: 'none' } });
  try {
    await container.start();
    await container.wait();
    const logs = await container.logs({ stdout: true, stderr: true });
    // Docker multiplexes the streams with an 8-byte header per frame.
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

describe('DockerSandboxImages on the real engine', () => {
  // A package name unique to this run keeps the first ensure a real build whatever earlier runs left.
  const recipe = { base: engine.baseImage, steps: [['/bin/sh', '-c', 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"', 'apt-get', 'jq'], ['/bin/sh', '-c', `echo ${run} > /etc/berth-run`]] };

  it('builds the packages into an image once, named by its inputs, and reuses it', async () => {
    const first = await images.ensure(recipe, () => undefined);
    built.push(first.image);
    console.log(`environment image: first ensure (build) ${first.seconds.toFixed(1)} s, image ${first.image}`);
    expect(first).toMatchObject({ image: expect.stringMatching(/^berth\/env:[0-9a-f]{16}$/), built: true });
    expect((await output(first.image, ['jq', '--version'])).trim()).toMatch(/^jq-1\./);
    expect((await output(first.image, ['id', '-u'])).trim()).toBe('1000');

    const second = await images.ensure(recipe);
    console.log(`environment image: second ensure (reuse) ${second.seconds.toFixed(2)} s`);
    expect(second).toMatchObject({ image: first.image, built: false });
    expect(second.seconds).toBeLessThan(first.seconds);
  });

  it('fails with the package manager\'s own message when a package does not exist', async () => {
    const broken = { base: engine.baseImage, steps: [['/bin/sh', '-c', 'apt-get update -qq && apt-get install -y -qq "$@"', 'apt-get', `no-such-package-${run}`]] };
    await expect(images.ensure(broken)).rejects.toMatchObject({ code: 'SANDBOX_IMAGE_BUILD_FAILED', message: expect.stringContaining(`Unable to locate package no-such-package-${run}`) });
  });
});
