import { chargedRecoveryMs, formatTable, RECOVERY_BOUND_MS, runScenario, startChaosPlatform, type ScenarioResult } from './run-scenario';
import { SCENARIOS } from './scenarios';
import type { Supervisor } from './supervisor';

/**
 * The chaos suite (docs/chaos.md): one platform for the file (nats-server, Docker engine, the
 * four services over a fresh SQLite file), one test per scenario. Each test asserts the
 * invariants and that recovery stayed within the bound docs/recovery.md states.
 */
describe('chaos', () => {
  let platform: Awaited<ReturnType<typeof startChaosPlatform>>;
  let sup: Supervisor;
  const results: ScenarioResult[] = [];

  beforeAll(async () => {
    platform = await startChaosPlatform();
    sup = platform.sup;
  }, 600_000);

  afterAll(async () => {
    if (results.length > 0) process.stdout.write(`\n${formatTable(results)}\n`);
    await platform?.stop();
  }, 60_000);

  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    '%s: nothing lost or doubled, every turn settles within the bound, the next message works',
    async (_name, scenario) => {
      const result = await runScenario(scenario, sup, (line) => process.stderr.write(`${line}\n`));
      results.push(result);
      expect(result.violations).toEqual([]);
      expect(result.lost).toBe(0);
      expect(result.duplicated).toBe(0);
      if (result.recovery !== null) expect(chargedRecoveryMs(result.recovery)).toBeLessThanOrEqual(scenario.boundMs ?? RECOVERY_BOUND_MS);
    },
    180_000,
  );
});
