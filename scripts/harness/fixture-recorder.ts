import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * With BERTH_RECORD_HARNESS_FIXTURES=1, integration tests save the real CLI's stdout as the
 * adapter's unit-test fixture: `libs/harness/src/<kind>/fixtures/<name>.stdout.json` (an array of
 * raw lines). Temp paths and ports are normalised so re-recording gives stable diffs.
 */
export function recordFixture(kind: string, name: string, lines: readonly string[], tempRoot: string): void {
  if (process.env['BERTH_RECORD_HARNESS_FIXTURES'] !== '1') return;
  const scrubbed = lines
    .filter((line) => line.trim().length > 0)
    .map((line) => line.split(tempRoot).join('/sandbox').replace(/http:\/\/127\.0\.0\.1:\d+/g, 'http://127.0.0.1:8080'));
  const dir = join(__dirname, '..', '..', 'libs', 'harness', 'src', kind, 'fixtures');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.stdout.json`), `${JSON.stringify(scrubbed, null, 2)}\n`);
}
