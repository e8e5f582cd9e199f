import { AGENT_TOOL_NAMES, WEBHOOK_EVENT_TYPES as API_WEBHOOK_EVENT_TYPES } from '@berth/contracts';
import { AGENT_TOOLS, WEBHOOK_EVENT_TYPES } from './types';

// The console bundles no contract library (it would pull zod and Node-only modules into the
// browser), so it keeps its own copies of the lists its forms offer; these must not drift.
describe('the lists the console offers are the ones the API accepts', () => {
  it('agent toolset tools', () => {
    expect([...AGENT_TOOLS]).toEqual([...AGENT_TOOL_NAMES]);
  });

  it('webhook event types', () => {
    expect([...WEBHOOK_EVENT_TYPES]).toEqual([...API_WEBHOOK_EVENT_TYPES]);
  });
});
