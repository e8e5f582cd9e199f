import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { StaticFileServer } from './static-file-server';

/**
 * A package with one command: `bin` prints `prints` when run. `tarballAt` makes its metadata name
 * another place for its archive (what a hostile registry or package could do).
 */
export type TestNpmPackage = Readonly<{ name: string; version: string; bin: string; prints: string; tarballAt?: string }>;

/**
 * A tiny npm registry on 127.0.0.1 serving the packages it was given (packument and tarball, with
 * real integrity), made by the test with no network: what an operator's `BERTH_NPM_REGISTRY`
 * would be, reached under `publicUrl`'s host through the test's upstream proxy.
 */
export class TestNpmRegistry {
  readonly dir = mkdtempSync(join(tmpdir(), 'berth-npm-'));
  readonly files = new StaticFileServer(this.dir);

  /** `publicUrl`: the registry as the build names it, e.g. `http://registry.npm.test`. */
  constructor(
    private readonly publicUrl: string,
    private readonly packages: readonly TestNpmPackage[],
  ) {}

  async start(): Promise<this> {
    for (const p of this.packages) this.publish(p);
    await this.files.start();
    return this;
  }

  async close(): Promise<void> {
    await this.files.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private publish(p: TestNpmPackage): void {
    const work = mkdtempSync(join(tmpdir(), 'berth-npm-pack-'));
    mkdirSync(join(work, 'package', 'bin'), { recursive: true });
    const manifest = { name: p.name, version: p.version, bin: { [p.bin]: 'bin/cli.js' } };
    writeFileSync(join(work, 'package', 'package.json'), JSON.stringify(manifest));
    writeFileSync(join(work, 'package', 'bin', 'cli.js'), `#!/usr/bin/env node\nconsole.log(${JSON.stringify(p.prints)});\n`, { mode: 0o755 });
    const tarball = join(work, 'package.tgz');
    create({ gzip: true, cwd: work, file: tarball, sync: true, portable: true }, ['package']);
    const data = readFileSync(tarball);
    rmSync(work, { recursive: true, force: true });
    const file = `${p.name}-${p.version}.tgz`;
    mkdirSync(join(this.dir, p.name, '-'), { recursive: true });
    writeFileSync(join(this.dir, p.name, '-', file), data);
    const dist = {
      tarball: p.tarballAt ?? `${this.publicUrl.replace(/\/$/, '')}/${p.name}/-/${file}`,
      shasum: createHash('sha1').update(data).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
    };
    writeFileSync(join(this.dir, p.name, 'index.json'), JSON.stringify({ name: p.name, 'dist-tags': { latest: p.version }, versions: { [p.version]: { ...manifest, dist } } }));
  }
}
