import type { WorkspaceReadReply, WorkspaceReadRequest } from '@berth/contracts';

/** Asks whoever owns the sandboxes (the sandbox-manager) to read a session's workspace. */
export interface WorkspaceReads {
  read(request: WorkspaceReadRequest): Promise<WorkspaceReadReply>;
}

/** What a gateway without a sandbox-manager answers: the session has no workspace to read. */
export const NO_WORKSPACE: WorkspaceReads = {
  read: async (request) =>
    request.kind === 'list' && request.path === '' ? { kind: 'entries', entries: [], truncated: false } : { kind: 'refused', status: 404, code: 'WORKSPACE_PATH_NOT_FOUND', message: 'the session has no workspace yet' },
};
