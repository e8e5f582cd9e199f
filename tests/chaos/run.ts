import { KNOWN_FAILURES } from './known-failures';
import { formatTable, mergeRuns, runScenario, startChaosPlatform, type ScenarioResult } from './run-scenario';
import { SCENARIOS } from './scenarios';

/**
 * The chaos suite without jest: every scenario (or those whose name contains one of the
 * arguments), `--runs N` times each, then the table. Exits 1 when any scenario failed.
 *   node -r @swc-node/register tests/chaos/run.ts [--runs 2] [name filter…]
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Math.max(1, Number(args[runsAt + 1]) || 1) : 1;
  const filters = runsAt >= 0 ? args.filter((_, i) => i !== runsAt && i !== runsAt + 1) : args;
  const chosen = SCENARIOS.filter((s) => filters.length === 0 || filters.some((f) => s.name.includes(f)));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const results: ScenarioResult[] = [];
  const started = Date.now();
  const platform = await startChaosPlatform();
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
  for (const r of results.filter((x) => !x.passed)) {
    const known = KNOWN_FAILURES[r.name];
    console.log(`${r.name}${known ? ` (known: ${known.defect})` : ''}:\n${r.violations.map((v) => `  - ${v}`).join('\n')}`);
  }
  console.log(`${results.filter((r) => r.passed).length} of ${results.length} scenarios passed in ${Math.round((Date.now() - started) / 1000)} s`);
  process.exit(results.every((r) => r.passed) ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
