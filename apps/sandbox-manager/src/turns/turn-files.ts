import { SANDBOX_HOME } from '@berth/sandbox-domain';

/**
 * Where a turn leaves its traces inside the sandbox: the harness's stdout (every line, appended),
 * the pid of the process group that runs it, and its exit code once it ended. A restarted
 * manager reads them to reattach without losing or repeating output.
 */
export const TURN_DIR = `${SANDBOX_HOME}/.berth/turns`;

export type TurnFiles = Readonly<{ output: string; pid: string; exit: string }>;

export function turnFiles(turnId: string): TurnFiles {
  return { output: `${TURN_DIR}/${turnId}.jsonl`, pid: `${TURN_DIR}/${turnId}.pid`, exit: `${TURN_DIR}/${turnId}.exit` };
}

/**
 * The exec that runs the harness: its stdout is also appended to the turn's output file. Docker
 * makes the exec's shell a process-group leader, so its pid is the group to signal on interrupt.
 * The harness argv is passed as positional arguments, never spliced into the script.
 */
export function harnessExecCommand(turnId: string, argv: readonly string[]): string[] {
  const script = [
    'd="$1"; t="$2"; shift 2',
    'mkdir -p "$d"',
    'echo $$ > "$d/$t.pid"',
    '{ "$@"; echo $? > "$d/$t.exit"; } | tee -a "$d/$t.jsonl"',
  ].join('\n');
  return ['sh', '-c', script, 'berth-turn', TURN_DIR, turnId, ...argv];
}

/** Prints `pid alive|dead exit-code-or-dash` for a turn, or nothing when it never started here. */
export function turnStatusCommand(turnId: string): string[] {
  const f = turnFiles(turnId);
  const script = [
    `[ -f '${f.pid}' ] || exit 0`,
    `p=$(cat '${f.pid}')`,
    'if kill -0 "$p" 2>/dev/null; then a=alive; else a=dead; fi',
    `e=$(cat '${f.exit}' 2>/dev/null || echo -)`,
    'echo "$p $a $e"',
  ].join('\n');
  return ['sh', '-c', script];
}

export type TurnProcessStatus = Readonly<{ pid: number; alive: boolean; exitCode: number | null }>;

export function parseTurnStatus(line: string | undefined): TurnProcessStatus | null {
  const match = /^(\d+) (alive|dead) (-|\d+)$/.exec(line?.trim() ?? '');
  if (!match) return null;
  return { pid: Number(match[1]), alive: match[2] === 'alive', exitCode: match[3] === '-' ? null : Number(match[3]) };
}

/** Signals the turn's whole process group (harness and tee): `signal` first, then KILL after a grace. */
export function killTurnCommand(turnId: string, signal: 'INT' | 'TERM', graceSeconds: number): string[] {
  const f = turnFiles(turnId);
  const script = [
    `p=$(cat '${f.pid}' 2>/dev/null) || exit 0`,
    `kill -s ${signal} -- "-$p" 2>/dev/null || exit 0`,
    `sleep ${graceSeconds}`,
    'kill -s KILL -- "-$p" 2>/dev/null',
    'exit 0',
  ].join('\n');
  return ['sh', '-c', script];
}

/** Follows a running turn's output file from a byte offset until its process group leader exits. */
export function followOutputCommand(turnId: string, fromByte: number, pid: number): string[] {
  return ['tail', '-c', `+${fromByte + 1}`, '-f', `--pid=${pid}`, turnFiles(turnId).output];
}
