import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

type Cli = 'claude' | 'codex' | 'pi';

let installAttempt: { binDir: string | null; reason: string } | null = null;

/**
 * The bin dir holding the pinned harness CLIs. When they are missing, runs install-clis.sh once
 * (npm, idempotent) unless BERTH_SKIP_CLI_INSTALL=1; returns null with the reason when that fails,
 * so the tests can say plainly why they were skipped.
 */
export function harnessBinDir(cli: Cli): { binDir: string | null; reason: string } {
  const prefix = process.env['BERTH_CLI_PREFIX'] ?? '/var/cache/berth/clis';
  const binDir = join(prefix, 'node_modules', '.bin');
  if (existsSync(join(binDir, cli))) return { binDir, reason: '' };
  if (process.env['BERTH_SKIP_CLI_INSTALL'] === '1') {
    return { binDir: null, reason: `${cli} is not installed under ${prefix} (BERTH_SKIP_CLI_INSTALL=1): run scripts/harness/install-clis.sh` };
  }
  installAttempt ??= install(prefix);
  if (installAttempt.binDir !== null && existsSync(join(installAttempt.binDir, cli))) return installAttempt;
  return { binDir: null, reason: installAttempt.reason || `${cli} is missing after install-clis.sh` };
}

function install(prefix: string): { binDir: string | null; reason: string } {
  try {
    const out = execFileSync('bash', [join(__dirname, 'install-clis.sh'), prefix], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    return { binDir: out.trim().split('\n').at(-1) ?? null, reason: '' };
  } catch (error) {
    return { binDir: null, reason: `install-clis.sh failed: ${String(error).slice(0, 500)}` };
  }
}
