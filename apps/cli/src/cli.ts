import { ApiClient } from './api/client';
import { parseCommandLine } from './args';
import type { Command, Io } from './commands/command';
import { COMMANDS } from './commands';
import { ApiError, ExitCode, MissingKeyError, ReportedFailure, UsageError, exitCodeFor, type ExitCode as Code } from './exit-codes';
import { formatError } from './output/format';

export type CliEnv = Readonly<{
  env: Readonly<Record<string, string | undefined>>;
  io: Io;
  fetchImpl?: typeof fetch;
  signal?: AbortSignal;
  streamBackoffMs?: number;
}>;

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** Runs one `berth` command line and answers the exit code; every failure is printed, never thrown. */
export async function runCli(argv: readonly string[], { env, io, fetchImpl = fetch, signal = new AbortController().signal, streamBackoffMs }: CliEnv): Promise<Code> {
  try {
    const invocation = parseCommandLine(argv, COMMANDS);
    if (invocation.kind === 'help') {
      io.out(invocation.text);
      return ExitCode.ok;
    }
    const { spec, args, options, global } = invocation;
    const command = spec as Command;
    const apiKey = global.apiKey ?? env.BERTH_API_KEY ?? '';
    if (!apiKey && !command.local) throw new MissingKeyError('no API key: pass --api-key or set BERTH_API_KEY');
    const api = new ApiClient({ apiUrl: global.apiUrl ?? env.BERTH_API_URL ?? DEFAULT_API_URL, apiKey }, fetchImpl);
    const output = await command.run({ api, io, json: global.json, signal, fetchImpl, streamBackoffMs, env }, args, options);
    if (output) io.out(global.json ? JSON.stringify(output.json, null, 2) : output.human);
    return ExitCode.ok;
  } catch (e) {
    if (e instanceof ReportedFailure) {
      io.out(json(argv) ? JSON.stringify(e.output.json, null, 2) : e.output.human);
      return ExitCode.apiError;
    }
    if (e instanceof UsageError) io.err(`error: ${e.message}`);
    else if (e instanceof ApiError) io.err(formatError(e));
    else io.err(`error: ${(e as Error).message}`);
    return exitCodeFor(e);
  }
}

/** --json anywhere on the line (the parse already succeeded when a command reports a failure). */
const json = (argv: readonly string[]): boolean => argv.includes('--json');
