import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstFile, packFile } from './tar';

describe('tar', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-tar-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs a file that GNU tar extracts with its content and mode', () => {
    const data = Buffer.from('x'.repeat(1500) + '\nend');
    writeFileSync(join(dir, 'a.tar'), packFile({ name: 'notes.txt', data, mode: 0o600 }));
    execFileSync('tar', ['-xf', 'a.tar'], { cwd: dir });
    expect(readFileSync(join(dir, 'notes.txt'))).toEqual(data);
    expect(statSync(join(dir, 'notes.txt')).mode & 0o777).toBe(0o600);
  });

  it('reads back the first regular file of a GNU tar archive, skipping directories and pax headers', () => {
    const long = 'n'.repeat(120) + '.json';
    execFileSync('mkdir', ['-p', join(dir, 'd')]);
    writeFileSync(join(dir, 'd', long), '{"ok":true}');
    // A directory entry first, then a pax extended header (the name is over 100 bytes), then the file.
    const archive = execFileSync('tar', ['--format=pax', '-cf', '-', '-C', dir, 'd'], { maxBuffer: 1 << 20 });
    expect(archive.toString('latin1')).toContain(`path=d/${long}`);
    expect(firstFile(archive)?.toString()).toBe('{"ok":true}');
  });

  it('round-trips empty and binary content, and finds nothing in an archive without files', () => {
    expect(firstFile(packFile({ name: 'e', data: Buffer.alloc(0) }))).toEqual(Buffer.alloc(0));
    const bytes = Buffer.from([0, 255, 10, 13, 0]);
    expect(firstFile(packFile({ name: 'bin', data: bytes }))).toEqual(bytes);
    expect(firstFile(Buffer.alloc(1024))).toBeNull();
  });
});
