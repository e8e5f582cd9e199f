import { randomBytes } from 'node:crypto';
import type { SandboxInfo, SandboxRuntime, SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';

/** One runtime under the contract, and what only its own world can do. */
export type RuntimeUnderTest = Readonly<{
  runtime: SandboxRuntime;
  /** An image with a POSIX shell and coreutils (the base image). */
  image: string;
  /** Ends the sandbox's main process from outside the runtime (`docker kill`; the kubelet's report of a killed container). */
  kill(sandbox: SandboxInfo): Promise<void>;
  dispose(): Promise<void>;
}>;

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

/**
 * The behaviour every `SandboxRuntime` must have, whatever it runs on: idempotent create, stop and
 * remove; exec with streamed stdout, separate stderr, stdin and the exit code; files written,
 * appended and read as the sandbox user; a death from outside on the event stream; a rename that
 * never takes a taken name (the last guard of a warm claim). `target` says what the runtime runs
 * against, and is printed in the suite's name (a stand-in API says so there).
 */
export function describeSandboxRuntimeContract(target: string, setup: () => Promise<RuntimeUnderTest>): void {
  describe(`SandboxRuntime contract: ${target}`, () => {
    const run = `c${randomBytes(4).toString('hex')}`;
    let under: RuntimeUnderTest;
    const runtime = () => under.runtime;
    const spec = (suffix: string, overrides: Partial<SandboxSpec> = {}): SandboxSpec => ({
      name: `berth-s-${run}${suffix}-g1`,
      image: under.image,
      labels: { 'berth.managed': 'true', 'berth.session': `${run}${suffix}`, 'berth.generation': '1', 'berth.environment': 'env_test', 'berth.test-run': run },
      env: { HOME: '/tmp', BERTH_CONTRACT: 'yes' },
      network: 'none',
      user: '1000:1000',
      workdir: '/tmp',
      memoryBytes: 128 * 1024 * 1024,
      nanoCpus: 500_000_000,
      pidsLimit: 64,
      readOnlyRoot: false,
      cmd: ['/bin/sh', '-c', "trap 'exit 0' TERM INT; sleep infinity & wait"],
      ...overrides,
    });

    beforeAll(async () => {
      under = await setup();
    });
    afterAll(async () => {
      if (under === undefined) return;
      for (const info of await runtime().list({ 'berth.test-run': run })) await runtime().remove(info.id);
      await under.dispose();
    });

    it('creates a running sandbox as the spec says, and ensureRunning again is the same one', async () => {
      const first = await runtime().ensureRunning(spec('a'));
      expect(first).toMatchObject({ name: `berth-s-${run}a-g1`, running: true, exitCode: null, labels: expect.objectContaining({ 'berth.session': `${run}a` }) });
      expect(first.startedAt).not.toBeNull();
      const second = await runtime().ensureRunning(spec('a'));
      expect(second.id).toBe(first.id);
      expect(await runtime().list({ 'berth.test-run': run, 'berth.session': `${run}a` })).toHaveLength(1);
      expect(await runtime().inspect(first.name)).toMatchObject({ id: first.id, running: true });
      const inside = await collect((await runtime().exec(first.name, { cmd: ['/bin/sh', '-c', 'id -u; echo "$BERTH_CONTRACT"; pwd'] })).lines);
      expect(inside).toEqual(['1000', 'yes', '/tmp']);
    });

    it('stop and remove are idempotent, including on sandboxes that never existed', async () => {
      const info = await runtime().ensureRunning(spec('s'));
      await runtime().stop(info.id, 1);
      await runtime().stop(info.id, 1);
      expect((await runtime().inspect(info.id))?.running ?? false).toBe(false);
      await runtime().remove(info.id);
      await runtime().remove(info.id);
      await runtime().stop(`berth-s-${run}never-g1`);
      await runtime().remove(`berth-s-${run}never-g1`);
      expect(await runtime().inspect(info.id)).toBeNull();
      expect(await runtime().inspect(`berth-s-${run}never-g1`)).toBeNull();
    });

    it('exec streams stdout lines as they come, keeps stderr apart, takes stdin and reports the exit code', async () => {
      const info = await runtime().ensureRunning(spec('e'));
      const handle = await runtime().exec(info.name, { cmd: ['/bin/sh', '-c', 'echo first; echo oops >&2; while read l; do echo "got $l"; done; exit 3'] });
      const iterator = handle.lines[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toBe('first');
      handle.write('one\n');
      expect((await iterator.next()).value).toBe('got one');
      handle.write('two\n');
      handle.closeStdin();
      expect((await iterator.next()).value).toBe('got two');
      expect((await iterator.next()).done).toBe(true);
      expect(await handle.exit).toBe(3);
      expect(handle.stderrTail?.()).toBe('oops\n');
    });

    it('exec with stdin given up front feeds it and closes it; env and workdir apply', async () => {
      const info = await runtime().ensureRunning(spec('e'));
      const counted = await runtime().exec(info.name, { cmd: ['wc', '-l'], stdin: 'a\nb\nc\n' });
      expect(await collect(counted.lines)).toEqual(['3']);
      expect(await counted.exit).toBe(0);
      const placed = await runtime().exec(info.name, { cmd: ['/bin/sh', '-c', 'echo "$GREETING"; pwd'], env: { GREETING: 'hello there' }, workdir: '/' });
      expect(await collect(placed.lines)).toEqual(['hello there', '/']);
    });

    it('writes and reads files, owned by the sandbox user with the mode asked for; a missing one is null', async () => {
      const info = await runtime().ensureRunning(spec('f'));
      const body = Buffer.concat([Buffer.from(JSON.stringify({ hello: 'world', big: 'x'.repeat(3000) })), Buffer.from([0, 13, 10, 255])]);
      await runtime().writeFile(info.name, '/tmp/config.json', body, 0o600);
      expect(await runtime().readFile(info.name, '/tmp/config.json')).toEqual(body);
      expect(await collect((await runtime().exec(info.name, { cmd: ['stat', '-c', '%u %a', '/tmp/config.json'] })).lines)).toEqual(['1000 600']);
      expect(await runtime().readFile(info.name, '/tmp/missing.json')).toBeNull();
      expect(await runtime().stat(info.name, '/tmp/config.json')).toMatchObject({ kind: 'file', size: body.length });
      expect(await runtime().stat(info.name, '/tmp')).toMatchObject({ kind: 'directory' });
      expect(await runtime().stat(info.name, '/tmp/missing.json')).toBeNull();
      expect(await runtime().getArchive(info.name, '/tmp/missing.json')).toBeNull();
      expect(await runtime().getArchive(info.name, '/tmp/config.json')).not.toBeNull();
    });

    it('appends to a file (creating it) as the sandbox user, larger than one command-line argument may be', async () => {
      const info = await runtime().ensureRunning(spec('g'));
      const big = `${'y'.repeat(200_000)}\n`;
      await runtime().appendFile(info.name, '/tmp/feed.in', '{"n":1}\n');
      await runtime().appendFile(info.name, '/tmp/feed.in', big);
      expect((await runtime().readFile(info.name, '/tmp/feed.in'))?.toString()).toBe(`{"n":1}\n${big}`);
      expect(await collect((await runtime().exec(info.name, { cmd: ['stat', '-c', '%u', '/tmp/feed.in'] })).lines)).toEqual(['1000']);
      await expect(runtime().appendFile(info.name, 'relative.txt', 'x')).rejects.toThrow(/absolute/);
    });

    it('a sandbox killed from outside: the event stream reports its die with the exit code and its labels', async () => {
      const info = await runtime().ensureRunning(spec('k'));
      const abort = new AbortController();
      const events: SandboxRuntimeEvent[] = [];
      const died = (async () => {
        for await (const event of runtime().events(abort.signal)) {
          events.push(event);
          if (event.kind === 'die' && event.containerId === info.id) return event;
        }
        return null;
      })();
      // The subscription is live once it reports a sandbox started after it: poll for that.
      for (let i = 0; !events.some((e) => e.kind === 'start' && e.name.startsWith(`berth-s-${run}p`)); i += 1) {
        const probe = await runtime().ensureRunning(spec(`p${i}`));
        await new Promise((r) => setTimeout(r, 100));
        await runtime().remove(probe.id);
        if (i > 100) throw new Error('the event stream never reported a start');
      }
      await under.kill(info);
      const die = await died;
      abort.abort();
      expect(die).toMatchObject({ name: info.name, exitCode: 137, labels: expect.objectContaining({ 'berth.session': `${run}k`, 'berth.generation': '1' }) });
      expect(await runtime().inspect(info.id)).toMatchObject({ running: false, exitCode: 137 });
    });

    it('the event stream ends when its signal aborts', async () => {
      const abort = new AbortController();
      const iterating = (async () => {
        for await (const _ of runtime().events(abort.signal)) void _;
        return 'ended';
      })();
      abort.abort();
      await expect(iterating).resolves.toBe('ended');
    });

    it('a rename never takes a taken name, and the renamed sandbox answers to its new name', async () => {
      const a = await runtime().ensureRunning(spec('n1'));
      const b = await runtime().ensureRunning(spec('n2'));
      const relabel = runtime().relabel?.bind(runtime());
      if (relabel === undefined) throw new Error('this runtime cannot rename: warm pools cannot claim on it');
      await expect(relabel(b.id, a.name)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await relabel(b.id, `berth-s-${run}n3-g1`);
      expect(await runtime().inspect(`berth-s-${run}n3-g1`)).toMatchObject({ id: b.id, running: true });
      expect((await runtime().inspect(a.name))?.id).toBe(a.id);
    });
  });
}
