import { BerthError, ErrorCodes } from '@berth/core';
import { SandboxManagerQueries, Subjects, WorkspaceReadReplySchema, type WorkspaceReadReply, type WorkspaceReadRequest } from '@berth/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import type { WorkspaceReads } from './workspace-reads.port';

/** The `workspace` request/reply query to the sandbox-manager; it may need to archive a large workspace first, hence the long timeout. */
export class NatsWorkspaceReads implements WorkspaceReads {
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {}

  async read(request: WorkspaceReadRequest): Promise<WorkspaceReadReply> {
    let reply: unknown;
    try {
      reply = (await this.nc.request(Subjects.query('sandbox-manager', SandboxManagerQueries.workspace), JSON.stringify(request), { timeout: this.timeoutMs })).json();
    } catch (error) {
      throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `no sandbox-manager read the workspace in time: ${error instanceof Error ? error.message : String(error)}`);
    }
    const parsed = WorkspaceReadReplySchema.safeParse(reply);
    if (!parsed.success) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the sandbox-manager could not read the workspace');
    return parsed.data;
  }
}
