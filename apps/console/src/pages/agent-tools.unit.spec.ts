import type { Agent } from '../api/types';
import { parseInputSchema, toolsFormOf, toolsOfForm, toolsSummary } from './agent-tools';

const LOOKUP = { type: 'custom', name: 'lookup_order', description: 'Find an order by id', input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } } as const;

const agent = (tools: Agent['tools'], mcp_servers: Agent['mcp_servers'] = []): Agent => ({
  id: 'agent_1',
  type: 'agent',
  name: 'a',
  description: null,
  system: null,
  model: { id: 'claude-sonnet-4-5' },
  tools,
  mcp_servers,
  version: 1,
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
  archived_at: null,
});

const toolset = (configs: Extract<Agent['tools'][number], { type: 'agent_toolset_20260401' }>['configs'] = []): Agent['tools'][number] => ({
  type: 'agent_toolset_20260401',
  default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
  configs,
});

describe('the agent form keeps what it does not edit', () => {
  it('an agent edited without touching its tools sends its custom tools back as they were', () => {
    const stored = agent([toolset(), { ...LOOKUP, input_schema: { ...LOOKUP.input_schema } }]);
    const { tools } = toolsOfForm(toolsFormOf(stored));
    expect(tools.filter((t) => t.type === 'custom')).toEqual([LOOKUP]);
  });

  it("keeps a web tool's options (allowed_domains) while its permission changes", () => {
    const stored = agent([toolset([{ name: 'web_fetch', type: 'web_fetch', enabled: true, permission_policy: { type: 'always_allow' }, allowed_domains: ['docs.example.com'] }])]);
    const form = toolsFormOf(stored);
    form.builtin.web_fetch.ask = true;
    const [sent] = toolsOfForm(form).tools;
    expect(sent?.type === 'agent_toolset_20260401' && sent.configs.find((c) => c.name === 'web_fetch')).toEqual({
      name: 'web_fetch',
      enabled: true,
      permission_policy: { type: 'always_ask' },
      allowed_domains: ['docs.example.com'],
    });
  });

  it('adds, edits and removes custom tools', () => {
    const form = toolsFormOf(agent([toolset(), LOOKUP]));
    form.custom.push({ name: ' refund ', description: 'Refund an order', schema: '{"type":"object","properties":{"amount":{"type":"number"}}}' });
    form.custom[0] = { ...form.custom[0]!, description: 'Find an order' };
    const sent = toolsOfForm(form).tools.filter((t) => t.type === 'custom');
    expect(sent).toEqual([
      { ...LOOKUP, description: 'Find an order' },
      { type: 'custom', name: 'refund', description: 'Refund an order', input_schema: { type: 'object', properties: { amount: { type: 'number' } } } },
    ]);
    form.custom.splice(0, 1);
    expect(toolsOfForm(form).tools.filter((t) => t.type === 'custom').map((t) => t.type === 'custom' && t.name)).toEqual(['refund']);
  });
});

describe('a custom tool whose input schema cannot be sent', () => {
  it.each([
    ['', /^input_schema is empty/],
    ['{"type": "object",', /^input_schema is not valid JSON: /],
    ['[1, 2]', /^input_schema must be a JSON object/],
    ['"object"', /^input_schema must be a JSON object/],
  ])('%j is refused with a readable reason', (text, reason) => {
    const parsed = parseInputSchema(text);
    expect('error' in parsed && parsed.error).toMatch(reason);
  });

  it('stops the save, naming the tool', () => {
    const form = toolsFormOf(null);
    form.custom.push({ name: 'broken', description: '', schema: '{nope' });
    expect(() => toolsOfForm(form)).toThrow(/^Custom tool broken: input_schema is not valid JSON/);
  });
});

it('the agents table names the custom tools', () => {
  expect(toolsSummary(agent([toolset(), LOOKUP], []))).toBe('8 tools · custom: lookup_order');
  expect(toolsSummary(agent([LOOKUP], [{ type: 'url', name: 'docs', url: 'https://mcp.example/mcp' }]))).toBe('no built-in tools · MCP: docs · custom: lookup_order');
});
