import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The bin dir install-clis.sh fills, or null (with the reason) when a CLI is missing. */
export function harnessBinDir(cli: 'claude' | 'codex' | 'pi'): { binDir: string | null; reason: string } {
  const prefix = process.env['BERTH_CLI_PREFIX'] ?? '/var/cache/berth/clis';
  const binDir = join(prefix, 'node_modules', '.bin');
  if (existsSync(join(binDir, cli))) return { binDir, reason: '' };
  return { binDir: null, reason: `${cli} is not installed under ${prefix}: run scripts/harness/install-clis.sh` };
}
