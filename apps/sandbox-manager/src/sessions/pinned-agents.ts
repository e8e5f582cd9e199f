import { readAgentConfig, type AgentConfig } from '@berth/contracts';
import type { AgentStore } from '@berth/ports';

/**
 * The agent version a session pinned at create, read from the store for every turn: an update
 * of the agent makes a new version and leaves this session's alone.
 */
export class PinnedAgents {
  constructor(private readonly agents: Pick<AgentStore, 'get'>) {}

  async read(ownerId: string, pinned: Readonly<{ id: string; version: number }>): Promise<AgentConfig | null> {
    const record = await this.agents.get(ownerId, pinned.id, pinned.version);
    return record === null ? null : readAgentConfig(record.config);
  }
}
