import { mkdirSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { x as extractTar } from 'tar';
import { UsageError } from '../exit-codes';
import type { Command } from './command';

export const workspaceCommands: readonly Command[] = [
  {
    name: ['workspace', 'pull'],
    args: ['session'],
    optional: ['dir'],
    options: { force: { type: 'boolean', help: 'extract into a directory that is not empty' } },
    summary: "copy a session's /workspace into a local directory (default ./<session>-workspace)",
    run: async ({ api, io }, a, o) => {
      const dir = resolve(a.dir ?? `${a.session}-workspace`);
      mkdirSync(dir, { recursive: true });
      if (!o.force && readdirSync(dir).length > 0) throw new UsageError(`${dir} is not empty (use --force to extract into it anyway)`);
      const res = await api.raw('GET', `/v1/sessions/${a.session}/workspace`);
      // The archive's top directory is `workspace/`; node-tar refuses absolute paths, `..` and writing through symlinks.
      await pipeline(Readable.fromWeb(res.body as WebReadableStream), extractTar({ cwd: dir, strip: 1 }));
      io.err(`pulled ${a.session}'s /workspace into ${dir}`);
      return { json: { session_id: a.session, path: dir }, human: dir };
    },
  },
];
