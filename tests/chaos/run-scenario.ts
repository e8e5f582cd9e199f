import { AnthropicMessagesServer } from '@berth/testing';
import { ChaosDriver } from './driver';
import { checkInvariants, type InvariantReport, type TurnExpectation } from './invariants';
import { Supervisor } from './supervisor';

/** docs/recovery.md, "Convergence bound": fault → the turn's terminal event… */
export const RECOVERY_BOUND_MS = 10_000;
/** …for a failed component that is back within this (the docs' assumed restart). */
export const ASSUMED_RESTART_MS = 2_000;

/**
 * One fault's recovery: fault → turn settled, and how long the failed part took to be back. The
 * recovery judged against the bound charges the restart at most the 2 s the docs assume: service
 * start-up on a loaded 2-core machine is the platform's cold start, not its recovery.
 */
export type Recovery = Readonly<{ totalMs: number; restartMs: number }>;
export const chargedRecoveryMs = (r: Recovery): number => r.totalMs - Math.max(0, r.restartMs - ASSUMED_RESTART_MS);

export type ScenarioContext = Readonly<{
  sup: Supervisor;
  driver: ChaosDriver;
  /** The scenario's scripted model (the driver's default environment points at it). */
  model: AnthropicMessagesServer;
  /** Another scripted model server for this scenario (closed with it): one per session that needs its own script. */
  newModel: () => Promise<AnthropicMessagesServer>;
}>;

/**
 * What a scenario body reports besides the invariants: recovery times, what went wrong, and each
 * turn it drove with the outcome and output that turn must end with (checked with the invariants).
 */
export type ScenarioOutcome = { recoveries: Recovery[]; problems: string[]; notes: string[]; expectations: TurnExpectation[] };

export type Scenario = Readonly<{
  name: string;
  /** What every turn under the fault must end as, in words (docs/chaos.md lists it). */
  requires: string;
  /** Recovery must stay within this (default: the documented bound). */
  boundMs?: number;
  run(ctx: ScenarioContext, outcome: ScenarioOutcome): Promise<void>;
}>;

export type ScenarioResult = Readonly<{
  name: string;
  runs: number;
  lost: number;
  duplicated: number;
  turns: number;
  /** The worst recovery over the runs (by charged time); null when the scenario measures none. */
  recovery: Recovery | null;
  boundMs: number;
  violations: readonly string[];
  notes: readonly string[];
  passed: boolean;
  elapsedMs: number;
}>;

/**
 * The platform one suite run shares: a fresh nats-server store dir and SQLite file, the four
 * services on one Docker engine (or two: `engines`), and a default scripted model. Each scenario
 * gets its own model server (its environment points the harness at it), sessions, SSE clients and
 * acknowledgement record.
 */
export async function startChaosPlatform(engines: 1 | 2 = 1): Promise<{ sup: Supervisor; stop(): Promise<void> }> {
  const fallbackModel = await new AnthropicMessagesServer().start();
  try {
    const sup = await Supervisor.start({ modelBaseUrl: fallbackModel.url, engines });
    return {
      sup,
      async stop() {
        await sup.stop();
        await fallbackModel.close();
      },
    };
  } catch (error) {
    await fallbackModel.close();
    throw error;
  }
}

/** One run of a scenario on the shared platform, then every invariant over what it touched. */
export async function runScenario(scenario: Scenario, sup: Supervisor, log: (line: string) => void = () => undefined): Promise<ScenarioResult> {
  const started = Date.now();
  const outcome: ScenarioOutcome = { recoveries: [], problems: [], notes: [], expectations: [] };
  const boundMs = scenario.boundMs ?? RECOVERY_BOUND_MS;
  const model = await new AnthropicMessagesServer().start();
  const extraModels: AnthropicMessagesServer[] = [];
  const newModel = async () => {
    const server = await new AnthropicMessagesServer().start();
    extraModels.push(server);
    return server;
  };
  let driver: ChaosDriver | null = null;
  let report: InvariantReport = { violations: [], lost: 0, duplicated: 0, turns: 0 };
  const logMark = sup.logMark();
  try {
    driver = await ChaosDriver.open(sup, model.url);
    try {
      await scenario.run({ sup, driver, model, newModel }, outcome);
    } catch (error) {
      outcome.problems.push(`scenario aborted: ${error instanceof Error ? error.message : String(error)}`);
    }
    // Every service back, plain, before judging (and before the next scenario).
    const fixed = await sup.settle();
    if (fixed.length > 0) outcome.notes.push(`after the run: ${fixed.join(', ')}`);
    report = await checkRun(driver, sup, outcome.expectations);
  } catch (error) {
    outcome.problems.push(`platform failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    if (outcome.problems.length > 0 || report.violations.length > 0) log(`${scenario.name}: service logs during the run\n${sup.logs(logMark)}`);
    await driver?.close();
    await Promise.all([model, ...extraModels].map((m) => m.close()));
  }
  const late = outcome.recoveries.filter((r) => chargedRecoveryMs(r) > boundMs);
  const problems = [
    ...outcome.problems,
    ...late.map((r) => `recovery took ${chargedRecoveryMs(r)} ms (${r.totalMs} ms with a ${r.restartMs} ms restart), over the ${boundMs} ms bound`),
  ];
  const violations = [...problems, ...report.violations];
  return {
    name: scenario.name,
    runs: 1,
    lost: report.lost,
    duplicated: report.duplicated,
    turns: report.turns,
    recovery: worst(outcome.recoveries),
    boundMs,
    violations,
    notes: outcome.notes,
    passed: violations.length === 0,
    elapsedMs: Date.now() - started,
  };
}

/**
 * Lets the SSE clients catch up with the journal, then checks the invariants. The platform keeps
 * running (sweeps may still append), so the SSE view and the journal are compared at one settled
 * point: the journal read after the frames were copied must not have moved past what was waited on.
 */
async function checkRun(driver: ChaosDriver, sup: Supervisor, expectations: readonly TurnExpectation[]) {
  const journals = new Map<string, Awaited<ReturnType<ChaosDriver['journal']>>>();
  const sse = new Map<string, readonly Readonly<{ seq: number; data: unknown }>[]>();
  for (const [sessionId, recorder] of driver.recorders) {
    let events = await driver.journal(sessionId);
    let frames: readonly Readonly<{ seq: number; data: unknown }>[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      // Events may still be in flight to the stream (outbox relay, a reconnect): wait, bounded.
      const settledAt = events.at(-1)?.seq ?? 0;
      await recorder.waitForSeq(settledAt, attempt === 0 ? 10_000 : 5_000);
      frames = [...recorder.frames];
      events = await driver.journal(sessionId);
      if ((events.at(-1)?.seq ?? 0) === settledAt) break;
    }
    journals.set(sessionId, events);
    sse.set(sessionId, frames);
  }
  // This scenario's containers on every engine (each asked directly): those named or labelled for its sessions.
  const mine = (c: { name: string; labels: Readonly<Record<string, string>> }) =>
    journals.has(c.labels['berth.session'] ?? '') || [...journals.keys()].some((id) => c.name.includes(id));
  const listed = await Promise.all(
    sup.hosts.map(async (host) => (await host.runtime.list({ 'berth.scope': sup.scope })).filter(mine).map((c) => ({ name: c.name, labels: c.labels, host: host.name }))),
  );
  const sandboxHosts = sup.hosts.length > 1 ? sup.hosts.map((h) => h.name) : [];
  return checkInvariants({ journals, acked: driver.acked, expectations, sse, containers: listed.flat(), sandboxHosts });
}

function worst(recoveries: readonly Recovery[]): Recovery | null {
  return recoveries.reduce<Recovery | null>((w, r) => (w === null || chargedRecoveryMs(r) > chargedRecoveryMs(w) ? r : w), null);
}

/** Merges several runs of one scenario into one row. */
export function mergeRuns(results: readonly ScenarioResult[]): ScenarioResult {
  const [first] = results;
  return {
    ...first,
    runs: results.length,
    lost: results.reduce((s, r) => s + r.lost, 0),
    duplicated: results.reduce((s, r) => s + r.duplicated, 0),
    turns: results.reduce((s, r) => s + r.turns, 0),
    recovery: worst(results.map((r) => r.recovery).filter((r): r is Recovery => r !== null)),
    violations: results.flatMap((r) => r.violations),
    notes: [...new Set(results.flatMap((r) => r.notes))],
    passed: results.every((r) => r.passed),
    elapsedMs: results.reduce((s, r) => s + r.elapsedMs, 0),
  };
}

/** The table `run.ts` prints. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header = ['scenario', 'runs', 'turns', 'lost', 'duplicated', 'recovery', 'fault→settled', 'restart', 'bound', 'result', 'time'];
  const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const rows = results.map((r) => [
    r.name,
    String(r.runs),
    String(r.turns),
    String(r.lost),
    String(r.duplicated),
    r.recovery === null ? '-' : secs(chargedRecoveryMs(r.recovery)),
    r.recovery === null ? '-' : secs(r.recovery.totalMs),
    r.recovery === null ? '-' : secs(r.recovery.restartMs),
    `${r.boundMs / 1000} s`,
    r.passed ? 'pass' : 'FAIL',
    `${Math.round(r.elapsedMs / 1000)} s`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
