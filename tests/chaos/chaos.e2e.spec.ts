import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { chargedRecoveryMs, formatTable, RECOVERY_BOUND_MS, runScenario, startChaosPlatform, type Scenario, type ScenarioResult } from './run-scenario';
import { SCENARIOS, TWO_ENGINE_SCENARIOS } from './scenarios';

/**
 * The chaos suite (docs/chaos.md): one platform per describe (nats-server, one Docker engine or
 * two, the four services over a fresh SQLite file), one test per scenario. Each test asserts the
 * invariants and that recovery stayed within the bound docs/recovery.md states.
 */
function chaosSuite(title: string, engines: 1 | 2, scenarios: readonly Scenario[]): void {
  describe(title, () => {
    let platform: Awaited<ReturnType<typeof startChaosPlatform>>;
    const results: ScenarioResult[] = [];
    const started = Date.now();

    beforeAll(async () => {
      platform = await startChaosPlatform(engines);
    }, 600_000);

    afterAll(async () => {
      if (results.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
      await platform?.stop();
      process.stdout.write(`${title}: ${results.filter((r) => r.passed).length} of ${results.length} scenarios passed, wall time ${Math.round((Date.now() - started) / 1000)} s\n`);
    }, 60_000);

    for (const scenario of scenarios) {
      it(
        `${scenario.name}: ${scenario.requires}; nothing lost or doubled, recovery within the bound, the next message works`,
        async () => {
          const result = await runScenario(scenario, platform.sup, (line) => process.stderr.write(`${line}\n`));
          results.push(result);
          expect(result.violations).toEqual([]);
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
        execFile(berth, ['replay', 'all', '--owner', 'chaos', '--store', platform.sup.storeUrl, '--json'], { maxBuffer: 64 * 1024 * 1024 }, (error, out) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout: out }),
        );
      });
      const report = JSON.parse(stdout) as { ok: boolean; sessions: { session_id: string; differences: unknown[] }[] };
      expect(report.sessions.length).toBeGreaterThan(0);
      expect(report.sessions.filter((s) => s.differences.length > 0)).toEqual([]);
      expect(code).toBe(0);
    }, 120_000);
  });
}

chaosSuite('chaos', 1, SCENARIOS);

// Its own platform (two engines, BERTH_SANDBOX_HOSTS), so the one-engine scenarios above keep their meaning.
chaosSuite('chaos on two Docker engines', 2, TWO_ENGINE_SCENARIOS);
