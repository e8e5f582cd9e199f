import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StaticFileServer } from './static-file-server';

/** A package with one command: `/usr/bin/<name>` prints `prints`. */
export type TestAptPackage = Readonly<{ name: string; version: string; prints: string }>;

/** True when this machine can make a repository (`dpkg-deb`, `dpkg-scanpackages` from dpkg-dev, `gpg`). */
export function canMakeAptRepository(): boolean {
  try {
    for (const tool of ['dpkg-deb', 'dpkg-scanpackages', 'gpg']) execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * A signed one-suite Debian repository on 127.0.0.1 (`dists/<suite>/main/binary-<arch>`,
 * `pool/main`), made by the test with `dpkg-deb` and `dpkg-scanpackages` and signed (InRelease)
 * with a key made for the run: what an operator's re-signing `BERTH_APT_MIRROR` would be, with
 * `key` (binary OpenPGP) as its `BERTH_APT_MIRROR_KEY`.
 */
export class TestAptRepository {
  readonly dir = mkdtempSync(join(tmpdir(), 'berth-apt-'));
  readonly files = new StaticFileServer(this.dir);
  key: Buffer = Buffer.alloc(0);

  constructor(
    private readonly packages: readonly TestAptPackage[],
    private readonly suite = 'bookworm',
  ) {}

  async start(): Promise<this> {
    const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    mkdirSync(join(this.dir, 'pool', 'main'), { recursive: true });
    for (const p of this.packages) this.build(p);
    const binary = `main/binary-${arch}`;
    mkdirSync(join(this.dir, 'dists', this.suite, binary), { recursive: true });
    const index = execFileSync('dpkg-scanpackages', ['--multiversion', 'pool', '/dev/null'], { cwd: this.dir, stdio: ['ignore', 'pipe', 'ignore'] });
    writeFileSync(join(this.dir, 'dists', this.suite, binary, 'Packages'), index);
    const sha = createHash('sha256').update(index).digest('hex');
    const release = [`Suite: ${this.suite}`, `Codename: ${this.suite}`, `Architectures: ${arch}`, 'Components: main', `Date: ${new Date().toUTCString()}`, 'SHA256:', ` ${sha} ${index.length} ${binary}/Packages`, ''].join('\n');
    writeFileSync(join(this.dir, 'dists', this.suite, 'Release'), release);
    this.sign(join(this.dir, 'dists', this.suite));
    await this.files.start();
    return this;
  }

  async close(): Promise<void> {
    await this.files.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  private build(p: TestAptPackage): void {
    const root = mkdtempSync(join(tmpdir(), 'berth-deb-'));
    mkdirSync(join(root, 'DEBIAN'));
    mkdirSync(join(root, 'usr', 'bin'), { recursive: true });
    writeFileSync(join(root, 'DEBIAN', 'control'), `Package: ${p.name}\nVersion: ${p.version}\nArchitecture: all\nMaintainer: Berth tests <tests@berth.test>\nDescription: a package a test made\n`);
    const bin = join(root, 'usr', 'bin', p.name);
    writeFileSync(bin, `#!/bin/sh\necho ${JSON.stringify(p.prints)}\n`);
    chmodSync(bin, 0o755);
    execFileSync('dpkg-deb', ['--root-owner-group', '--build', root, join(this.dir, 'pool', 'main', `${p.name}_${p.version}_all.deb`)], { stdio: 'ignore' });
    rmSync(root, { recursive: true, force: true });
  }

  /** InRelease signed by a key made here (its own GNUPGHOME, removed after); `key` is its public half. */
  private sign(dists: string): void {
    const home = mkdtempSync(join(tmpdir(), 'berth-gpg-'));
    const gpg = (args: string[]) => execFileSync('gpg', ['--batch', '--homedir', home, '--pinentry-mode', 'loopback', '--passphrase', '', ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      gpg(['--quick-gen-key', 'Berth test repository <apt@berth.test>', 'ed25519', 'sign', 'never']);
      gpg(['--clearsign', '--output', join(dists, 'InRelease'), join(dists, 'Release')]);
      this.key = gpg(['--export']);
      if (this.key.length === 0 || statSync(join(dists, 'InRelease')).size === 0) throw new Error('gpg made no key or signature');
    } finally {
      execFileSync('gpgconf', ['--homedir', home, '--kill', 'all'], { stdio: 'ignore' });
      rmSync(home, { recursive: true, force: true });
    }
  }
}
