import { randomBytes } from 'node:crypto';
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared engine fixture lives in the testing library
import { ensureDockerTestEngine } from '@berth/testing';
import { DockerSandboxRuntime } from './docker-sandbox-runtime';

jest.setTimeout(15 * 60_000);

// The one suite that needs the harness image (the first build takes minutes; later runs reuse it).
const engine = ensureDockerTestEngine({ harness: true });
const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost });
const run = `t${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  for (const info of await runtime.list({ 'berth.test-run': run })) await runtime.remove(info.id);
});

it('the harness image runs Node and the three CLIs as agent inside a hardened, read-only-root sandbox', async () => {
  const info = await runtime.ensureRunning({
    name: `berth-s-${run}-g1`,
    image: engine.harnessImage as string,
    labels: { 'berth.managed': 'true', 'berth.test-run': run },
    env: { HOME: '/home/agent', PI_OFFLINE: '1' },
    network: 'none',
    user: '1000:1000',
    workdir: '/workspace',
    memoryBytes: 1024 * 1024 * 1024,
    nanoCpus: 1_000_000_000,
    pidsLimit: 256,
    readOnlyRoot: true,
    cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"],
  });
  const handle = await runtime.exec(info.id, {
    cmd: ['/bin/bash', '-c', 'whoami; pwd; node --version; claude --version; codex --version; pi --version 2>&1; git --version | cut -d" " -f1'],
  });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  expect(await handle.exit).toBe(0);
  expect(lines[0]).toBe('agent');
  expect(lines[1]).toBe('/workspace');
  expect(lines[2]).toMatch(/^v20\./);
  expect(lines[3]).toMatch(/Claude Code/);
  expect(lines[4]).toMatch(/^codex-cli \d/);
  expect(lines[5]).toMatch(/^\d+\.\d+\.\d+/);
  expect(lines[6]).toBe('git');
});
