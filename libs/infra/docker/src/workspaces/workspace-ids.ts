import { ValidationError } from '@berth/core';

/** Where a workspace is mounted in every sandbox (mirrors SessionPaths in @berth/contracts; infra may not import it). */
export const WORKSPACE_TARGETS = { workspace: '/workspace', session: '/mnt/session' } as const;

/** The sandbox user (uid/gid 1000, `agent` in the harness image) owns everything in a workspace. */
export const WORKSPACE_OWNER = { uid: 1000, gid: 1000 } as const;

const ID = /^ws[ps]-[A-Za-z0-9_-]{1,128}$/;

export const spareId = (token: string): string => checked(`wsp-${token}`);
export const sessionWorkspaceId = (sessionId: string): string => checked(`wss-${sessionId}`);
export const isSpareId = (id: string): boolean => id.startsWith('wsp-') && ID.test(id);

function checked(id: string): string {
  if (!ID.test(id)) throw new ValidationError(`not a workspace id: ${id}`, 'workspace');
  return id;
}

/** Workspace ids and session ids become file and volume names: safe tokens only. */
export function checkWorkspaceId(id: string): string {
  return checked(id);
}
