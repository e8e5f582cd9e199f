import { parseArgs } from 'node:util';
import { UsageError } from './exit-codes';

/** One `berth` command's shape: name words, positional arguments and options. */
export type OptionSpec = Readonly<{ type: 'string' | 'boolean'; multiple?: boolean; short?: string; help: string }>;
export type CommandSpec = Readonly<{
  /** The words that select it: `['agents', 'create']`, `['send']`. */
  name: readonly string[];
  /** Positional argument names, in order; all required. */
  args: readonly string[];
  /** Positional arguments that may follow the required ones. */
  optional?: readonly string[];
  options: Readonly<Record<string, OptionSpec>>;
  summary: string;
}>;

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export type Invocation =
  | { kind: 'help'; text: string }
  | { kind: 'run'; spec: CommandSpec; args: Record<string, string>; options: OptionValues; global: GlobalOptions };

export type GlobalOptions = { apiUrl?: string; apiKey?: string; json: boolean };

export const GLOBAL_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  'api-url': { type: 'string', help: 'API base URL (env BERTH_API_URL)' },
  'api-key': { type: 'string', help: 'API key (env BERTH_API_KEY)' },
  json: { type: 'boolean', help: 'machine-readable JSON output' },
  help: { type: 'boolean', short: 'h', help: 'show help' },
};

/**
 * Parses `berth [global options] <command words> [args] [options]`. Throws UsageError naming what
 * is wrong; returns help text when asked for help (or given a bare group like `berth agents`).
 */
export function parseCommandLine(argv: readonly string[], specs: readonly CommandSpec[]): Invocation {
  const words = commandWords(argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h') || words[0] === 'help';
  const nameWords = words[0] === 'help' ? words.slice(1) : words;
  const spec = specs.find((s) => s.name.every((w, i) => nameWords[i] === w));

  if (!spec) {
    const group = specs.filter((s) => s.name[0] === nameWords[0]);
    if (group.length > 0 && (wantsHelp || nameWords.length === 1)) return { kind: 'help', text: usage(group) };
    if (wantsHelp || argv.length === 0) return { kind: 'help', text: usage(specs) };
    const what = group.length > 0 ? `unknown ${nameWords[0]} command "${nameWords[1] ?? ''}"` : `unknown command "${nameWords[0] ?? argv[0]}"`;
    throw new UsageError(`${what}\n\n${usage(group.length > 0 ? group : specs)}`);
  }
  if (wantsHelp) return { kind: 'help', text: usage([spec], true) };

  // Drop the command words (their first occurrences), keep everything else in order.
  const rest = [...argv];
  for (const w of spec.name) rest.splice(rest.indexOf(w), 1);

  let parsed: { values: OptionValues; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...spec.options }, allowPositionals: true, strict: true }) as typeof parsed;
  } catch (e) {
    throw new UsageError(`${(e as Error).message.replace(/\. To specify a positional.*$/s, '')}\n\n${usage([spec], true)}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length < spec.args.length) throw new UsageError(`missing <${spec.args[positionals.length]}>\n\n${usage([spec], true)}`);
  const names = [...spec.args, ...(spec.optional ?? [])];
  if (positionals.length > names.length) throw new UsageError(`unexpected argument "${positionals[names.length]}"\n\n${usage([spec], true)}`);

  const args = Object.fromEntries(names.flatMap((name, i) => (positionals[i] === undefined ? [] : [[name, positionals[i]]])));
  const global: GlobalOptions = { apiUrl: values['api-url'] as string | undefined, apiKey: values['api-key'] as string | undefined, json: values.json === true };
  const options = Object.fromEntries(Object.entries(values).filter(([k]) => !(k in GLOBAL_OPTIONS)));
  return { kind: 'run', spec, args, options, global };
}

/** The non-option words, skipping the values of global options given before the command. */
function commandWords(argv: readonly string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('-')) {
      const name = a.replace(/^--?/, '');
      if (GLOBAL_OPTIONS[name]?.type === 'string' && words.length === 0) i++;
      continue;
    }
    words.push(a);
  }
  return words;
}

export function usage(specs: readonly CommandSpec[], detailed = false): string {
  const lines = ['Usage: berth <command> [options]', ''];
  for (const s of specs) {
    lines.push(column(`  berth ${[...s.name, ...s.args.map((a) => `<${a}>`), ...(s.optional ?? []).map((a) => `[${a}]`)].join(' ')}`, 50) + s.summary);
    if (detailed) for (const [name, o] of Object.entries(s.options)) lines.push(column(`      ${optionLabel(name, o)}`, 50) + o.help);
  }
  lines.push('', 'Global options:');
  for (const [name, o] of Object.entries(GLOBAL_OPTIONS)) lines.push(column(`      ${optionLabel(name, o)}`, 50) + o.help);
  lines.push('', 'Exit codes: 0 ok, 1 API error, 2 usage, 3 auth, 4 not found, 5 connection.');
  return lines.join('\n');
}

/** Pads to `width`, always leaving at least two spaces before the description. */
const column = (left: string, width: number) => (left.length + 2 > width ? `${left}  ` : left.padEnd(width));

const optionLabel = (name: string, o: OptionSpec) => `--${name}${o.type === 'string' ? ' <value>' : ''}${o.multiple ? ' (repeatable)' : ''}`;

/** Reads a numeric option, refusing anything that is not a whole number ≥ `min`. */
export function intOption(values: OptionValues, name: string, min = 0): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || n < min) throw new UsageError(`--${name} must be a whole number ≥ ${min}, got "${String(raw)}"`);
  return n;
}

export function requiredOption(values: OptionValues, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}
