import { formatTable, mergeRuns, runScenario, startChaosPlatform, type ScenarioResult } from './run-scenario';
import { SCENARIOS, TWO_ENGINE_SCENARIOS } from './scenarios';

/**
 * The chaos suite without jest: every scenario (or those whose name contains one of the
 * arguments), `--runs N` times each, then the table. `--engines 2`: the scenarios of the platform
 * on two Docker engines instead. Exits 1 when any scenario failed.
 *   node -r @swc-node/register tests/chaos/run.ts [--engines 2] [--runs 2] [name filter…]
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string): number | null => {
    const at = args.indexOf(name);
    if (at < 0) return null;
    const value = Number(args[at + 1]);
    args.splice(at, 2);
    return value;
  };
  const runs = Math.max(1, option('--runs') || 1);
  const engines = option('--engines') === 2 ? 2 : 1;
  const chosen = (engines === 2 ? TWO_ENGINE_SCENARIOS : SCENARIOS).filter((s) => args.length === 0 || args.some((f) => s.name.includes(f)));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const results: ScenarioResult[] = [];
  const started = Date.now();
  const platform = await startChaosPlatform(engines);
  log(`platform up in ${Date.now() - started} ms`);
  for (const scenario of chosen) {
    const each: ScenarioResult[] = [];
    for (let i = 0; i < runs; i++) each.push(await runScenario(scenario, platform.sup, log));
    const merged = mergeRuns(each);
    results.push(merged);
    log(`${merged.passed ? 'pass' : 'FAIL'} ${scenario.name} (${Math.round(merged.elapsedMs / 1000)} s)${merged.notes.length ? `: ${merged.notes.join('; ')}` : ''}`);
    for (const v of merged.violations) log(`    ${v}`);
  }
  await platform.stop();
  console.log(`\n${formatTable(results)}\n`);
  for (const r of results.filter((x) => !x.passed)) console.log(`${r.name}:\n${r.violations.map((v) => `  - ${v}`).join('\n')}`);
  console.log(`${results.filter((r) => r.passed).length} of ${results.length} scenarios passed in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(results.every((r) => r.passed) ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
