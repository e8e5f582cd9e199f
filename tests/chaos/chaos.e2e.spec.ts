import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { KNOWN_FAILURES } from './known-failures';
import { chargedRecoveryMs, formatTable, RECOVERY_BOUND_MS, runScenario, startChaosPlatform, type ScenarioResult } from './run-scenario';
import { SCENARIOS } from './scenarios';
import type { Supervisor } from './supervisor';

/**
 * The chaos suite (docs/chaos.md): one platform for the file (nats-server, Docker engine, the
 * four services over a fresh SQLite file), one test per scenario. Each test asserts the
 * invariants and that recovery stayed within the bound docs/recovery.md states. A scenario listed in
 * known-failures.ts may show exactly its known violation (named in the test) and nothing else.
 */
describe('chaos', () => {
  let platform: Awaited<ReturnType<typeof startChaosPlatform>>;
  let sup: Supervisor;
  const results: ScenarioResult[] = [];
  const started = Date.now();

  beforeAll(async () => {
    platform = await startChaosPlatform();
    sup = platform.sup;
  }, 600_000);

  afterAll(async () => {
    if (results.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
    await platform?.stop();
    process.stdout.write(`chaos suite: ${results.filter((r) => r.passed).length} of ${results.length} scenarios passed, wall time ${Math.round((Date.now() - started) / 1000)} s\n`);
  }, 60_000);

  for (const scenario of SCENARIOS) {
    const known = KNOWN_FAILURES[scenario.name];
    const title = `${scenario.name}: ${scenario.requires}; nothing lost or doubled, recovery within the bound, the next message works`;
    it(
      known ? `${title} (KNOWN FAILURE: ${known.defect})` : title,
      async () => {
        const result = await runScenario(scenario, sup, (line) => process.stderr.write(`${line}\n`));
        results.push(result);
        const explained = known ? result.violations.filter((v) => known.symptom.test(v)) : [];
        expect(result.violations.filter((v) => !explained.includes(v))).toEqual([]);
        // Not failed: the scenario passed in full (fixed, or a race went the lucky way this time).
        if (known && explained.length === 0) process.stderr.write(`chaos: known failure did not occur in "${scenario.name}"; if it keeps passing, remove it from known-failures.ts\n`);
        expect(result.lost).toBe(0);
        expect(result.duplicated).toBe(0);
        if (result.recovery !== null) expect(chargedRecoveryMs(result.recovery)).toBeLessThanOrEqual(scenario.boundMs ?? RECOVERY_BOUND_MS);
      },
      180_000,
    );
  }

  it('berth replay: every session the faults touched folds from its journal to exactly its stored snapshot and read model', async () => {
    // The `berth` executable users run, so the chaos suite checks the journal the way an operator would.
    const berth = join(__dirname, '..', '..', 'bin', 'berth');
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(berth, ['replay', 'all', '--owner', 'chaos', '--store', sup.storeUrl, '--json'], { maxBuffer: 64 * 1024 * 1024 }, (error, out) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out }),
      );
    });
    const report = JSON.parse(stdout) as { ok: boolean; sessions: { session_id: string; differences: unknown[] }[] };
    expect(report.sessions.length).toBeGreaterThan(0);
    expect(report.sessions.filter((s) => s.differences.length > 0)).toEqual([]);
    expect(code).toBe(0);
  }, 120_000);
});
