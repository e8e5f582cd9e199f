import { SANDBOX_HOME } from '@berth/sandbox-domain';

/**
 * Where a turn leaves its traces inside the sandbox: the harness's stdout (every line, appended),
 * its stdin feed, the pid of the process group that runs it, and its exit code once it ended. A
 * restarted manager reads them to reattach without losing or repeating output, and appends to
 * the stdin feed to answer a harness that waited through the restart.
 */
export const TURN_DIR = `${SANDBOX_HOME}/.berth/turns`;

export type TurnFiles = Readonly<{ output: string; stdin: string; pid: string; exit: string }>;

export function turnFiles(turnId: string): TurnFiles {
  return { output: `${TURN_DIR}/${turnId}.jsonl`, stdin: `${TURN_DIR}/${turnId}.in`, pid: `${TURN_DIR}/${turnId}.pid`, exit: `${TURN_DIR}/${turnId}.exit` };
}

/**
 * The line that ends the harness's stdin (the feed stops before it; the harness reads end of file).
 * Every line Berth writes to a harness is a JSON object, so this one can never be a real input.
 */
export const STDIN_END = 'berth:end-of-input';

/**
 * How the harness gets its stdin: `follow` — the stdin file as it grows, until `STDIN_END` (answers
 * and interrupts are appended to it; nothing of it depends on the manager's connection, so a
 * restarted manager can still answer); `file` — the file as written before start, then end of file.
 */
export type StdinMode = 'follow' | 'file';

/**
 * The exec that runs the harness: its stdout is also appended to the turn's output file. The turn's
 * first input (`inputBytes` bytes) comes on the exec's own stdin and becomes the stdin file before
 * the harness starts, so the harness needs no write into the sandbox ahead of its exec; an input cut
 * short (the manager died while sending it) starts nothing and leaves no pid file, so the next
 * manager starts the turn afresh. Docker makes the exec's shell a process-group leader, so its pid
 * is the group to signal on interrupt (the stdin feed is in the group too). In `follow` mode a FIFO
 * carries the stdin file to the harness; the feed quits at `STDIN_END`, or at the latest once the
 * shell is gone (`--pid`). The manager that started the harness sends `STDIN_END` on the exec's
 * stdin after the first input (no exec of its own at the turn's end): a whole end line there is
 * appended to the stdin file; that stdin closing without one (the manager died) ends nothing, and
 * the next manager appends the line to the file itself. The harness argv is passed as positional
 * arguments, never spliced into the script.
 */
export function harnessExecCommand(turnId: string, stdin: StdinMode, inputBytes: number, argv: readonly string[]): string[] {
  const script = [
    'd="$1"; t="$2"; m="$3"; n="$4"; shift 4',
    'mkdir -p "$d"',
    'in="$d/$t.in"',
    '(umask 077; head -c "$n" > "$in.part")',
    'if [ "$(wc -c < "$in.part")" -ne "$n" ]; then echo "berth: the turn\'s input arrived incomplete; the harness was not started" >&2; exit 1; fi',
    'mv "$in.part" "$in"',
    'echo $$ > "$d/$t.pid"',
    'if [ "$m" = follow ]; then',
    '  f="$d/$t.fifo"; rm -f "$f"; mkfifo "$f"',
    `  tail -c +1 -s 0.2 -f --pid=$$ "$in" 2>/dev/null | sed -u -n '/^${STDIN_END}$/q;p' > "$f" 2>/dev/null &`,
    // A background list reads /dev/null unless told otherwise: fd 3 is the exec's stdin.
    '  exec 3<&0',
    `  { while IFS= read -r l; do if [ "$l" = '${STDIN_END}' ]; then echo "$l" >> "$in"; break; fi; done; } <&3 > /dev/null 2>&1 &`,
    '  r=$!',
    '  { "$@" < "$f" 3<&-; echo $? > "$d/$t.exit"; } | tee -a "$d/$t.jsonl"',
    '  s=$?; kill "$r" 2>/dev/null; exit $s',
    'else',
    '  { "$@" < "$in"; echo $? > "$d/$t.exit"; } | tee -a "$d/$t.jsonl"',
    'fi',
  ].join('\n');
  return ['sh', '-c', script, 'berth-turn', TURN_DIR, turnId, stdin, String(inputBytes), ...argv];
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

/** Signals the turn's whole process group (harness, tee and stdin feed): `signal` first, then KILL after a grace. */
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

/** The whole lines of a file read from the sandbox (a line still being written is left for later). */
export function wholeLines(file: Buffer | null): { lines: string[]; bytes: number } {
  if (file === null) return { lines: [], bytes: 0 };
  const whole = file.subarray(0, file.lastIndexOf(0x0a) + 1);
  return { lines: whole.toString('utf8').split('\n').filter((l) => l !== ''), bytes: whole.length };
}
