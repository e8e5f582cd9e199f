import { systemClock } from '@berth/core';
import { InMemorySandboxRuntime, MemoryStore } from '@berth/testing';
import { OutputCapture, outputFileId } from './output-capture';

const SESSION = 'sesn_out';
const OWNER = 'owner_a';

async function text(store: MemoryStore, blobKey: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of (await store.blobs.get(blobKey)) ?? []) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString();
}

describe('OutputCapture', () => {
  const setup = async () => {
    const store = new MemoryStore();
    const runtime = new InMemorySandboxRuntime();
    const sandbox = (await runtime.ensureRunning({ name: 'berth-s-sesn_out-g1', image: 'x', labels: {}, env: {}, network: 'none', user: '1000:1000', workdir: '/workspace', memoryBytes: 1, nanoCpus: 1, pidsLimit: 1, readOnlyRoot: false, cmd: [] })).name;
    const capture = new OutputCapture({ runtime, files: store.files, blobs: store.blobs, clock: systemClock });
    const run = () => capture.capture({ ownerId: OWNER, sessionId: SESSION, sandboxId: sandbox });
    return { store, runtime, sandbox, run };
  };

  it('makes each output a session-scoped file of the owner, named by its path below outputs/', async () => {
    const { store, runtime, sandbox, run } = await setup();
    await runtime.writeFile(sandbox, '/mnt/session/outputs/result.txt', 'done\n');
    await runtime.writeFile(sandbox, '/mnt/session/outputs/reports/q1.csv', 'a,b\n');
    await runtime.writeFile(sandbox, '/workspace/elsewhere.txt', 'not an output');
    expect(await run()).toBe(2);
    const listed = await store.files.list(OWNER, { limit: 10, scope_id: SESSION });
    expect(listed.data.map((f) => [f.filename, f.mime_type, f.size_bytes]).sort()).toEqual([
      ['reports/q1.csv', 'text/csv', 4],
      ['result.txt', 'text/plain', 5],
    ]);
    expect(listed.data.every((f) => f.scope?.id === SESSION && f.owner_id === OWNER)).toBe(true);
    const result = await store.files.get(OWNER, outputFileId(SESSION, 'result.txt'));
    expect(await text(store, result?.blob_key as string)).toBe('done\n');
    expect(await store.files.get('owner_b', outputFileId(SESSION, 'result.txt'))).toBeNull();
  });

  it('captures a file again only when it changed, replacing its bytes under the same id', async () => {
    const { store, runtime, sandbox, run } = await setup();
    await runtime.writeFile(sandbox, '/mnt/session/outputs/result.txt', 'v1');
    expect(await run()).toBe(1);
    const first = await store.files.get(OWNER, outputFileId(SESSION, 'result.txt'));
    expect(await run()).toBe(0);
    await runtime.writeFile(sandbox, '/mnt/session/outputs/result.txt', 'version 2');
    expect(await run()).toBe(1);
    const second = await store.files.get(OWNER, outputFileId(SESSION, 'result.txt'));
    expect(second).toMatchObject({ id: first?.id, size_bytes: 9 });
    expect(await text(store, second?.blob_key as string)).toBe('version 2');
    expect(await store.blobs.get(first?.blob_key as string)).toBeNull();
  });

  it('leaves an output the user deleted alone until the agent changes it', async () => {
    const { store, runtime, sandbox, run } = await setup();
    await runtime.writeFile(sandbox, '/mnt/session/outputs/result.txt', 'v1');
    await run();
    await store.files.markDeleted(OWNER, outputFileId(SESSION, 'result.txt'));
    expect(await run()).toBe(0);
    expect((await store.files.list(OWNER, { limit: 10, scope_id: SESSION })).data).toEqual([]);
    await runtime.writeFile(sandbox, '/mnt/session/outputs/result.txt', 'v2 changed');
    expect(await run()).toBe(1);
    expect((await store.files.list(OWNER, { limit: 10, scope_id: SESSION })).data.map((f) => f.filename)).toEqual(['result.txt']);
  });

  it('captures nothing when the sandbox has no outputs directory', async () => {
    const { run } = await setup();
    expect(await run()).toBe(0);
  });
});
