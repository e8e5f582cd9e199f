import { intOption, parseCommandLine, type Invocation } from './args';
import { COMMANDS } from './commands';
import { UsageError } from './exit-codes';

const parse = (line: string): Invocation => parseCommandLine(line.split(' ').filter(Boolean), COMMANDS);
const run = (line: string) => {
  const inv = parse(line);
  if (inv.kind !== 'run') throw new Error(`expected a command, got help for "${line}"`);
  return inv;
};
const usageError = (line: string): string => {
  try {
    parse(line);
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error(`"${line}" parsed without error`);
};

describe('parseCommandLine', () => {
  it('selects the command by its words and reads its options', () => {
    const inv = run('agents create --name coder --model claude-sonnet-4-5');
    expect(inv.spec.name).toEqual(['agents', 'create']);
    expect(inv.options).toEqual({ name: 'coder', model: 'claude-sonnet-4-5' });
    expect(inv.global).toEqual({ apiUrl: undefined, apiKey: undefined, json: false });
  });

  it('maps positionals to their names', () => {
    expect(run('send sesn_1 hello --wait').args).toEqual({ session: 'sesn_1', text: 'hello' });
    expect(run('sessions deny sesn_1 sevt_9 --message no').args).toEqual({ session: 'sesn_1', 'tool-use-id': 'sevt_9' });
  });

  it('accepts global options before or after the command', () => {
    const before = run('--api-url http://127.0.0.1:9 --api-key k agents list --json');
    expect(before.spec.name).toEqual(['agents', 'list']);
    expect(before.global).toEqual({ apiUrl: 'http://127.0.0.1:9', apiKey: 'k', json: true });
    expect(run('tail sesn_1 --after 5 --api-key k').global.apiKey).toBe('k');
  });

  it('collects a repeatable option', () => {
    expect(run('sessions list --status idle --status running').options.status).toEqual(['idle', 'running']);
  });

  it('names what is missing or unexpected', () => {
    expect(usageError('agents get')).toMatch(/^missing <agent>/);
    expect(usageError('send sesn_1')).toMatch(/^missing <text>/);
    expect(usageError('sessions get a b')).toMatch(/^unexpected argument "b"/);
    expect(usageError('agents list --bogus')).toMatch(/--bogus/);
    expect(usageError('agents fly')).toMatch(/^unknown agents command "fly"/);
    expect(usageError('launch')).toMatch(/^unknown command "launch"/);
  });

  it('answers help for a bare call, a group, or --help', () => {
    for (const line of ['', 'help', '--help', 'agents', 'agents --help', 'help agents']) expect(parse(line).kind).toBe('help');
    const detailed = parse('envs create --help');
    expect(detailed.kind === 'help' && detailed.text).toContain('--warm-pool <value>');
    const group = parse('sessions');
    expect(group.kind === 'help' && group.text).toContain('berth sessions recover <session>');
    expect(group.kind === 'help' && group.text).not.toContain('berth agents');
  });
});

describe('intOption', () => {
  it('reads whole numbers and refuses anything else', () => {
    expect(intOption({ after: '12' }, 'after')).toBe(12);
    expect(intOption({}, 'after')).toBeUndefined();
    expect(() => intOption({ after: 'x' }, 'after')).toThrow('--after must be a whole number ≥ 0, got "x"');
    expect(() => intOption({ limit: '0' }, 'limit', 1)).toThrow(UsageError);
    expect(() => intOption({ after: '-3' }, 'after')).toThrow(UsageError);
  });
});
