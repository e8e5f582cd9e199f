import { ErrorCodes, IllegalStateError, NotFoundError, ValidationError } from '@berth/core';
import { MAX_SESSION_RESOURCES, type SessionCommandOf, type SessionEvent, type SessionResource } from '@berth/contracts';
import { requireExists, requireTurnEligible, SessionErrorCodes } from '../guards';
import type { SessionState } from '../state';

/** The events of the resources a session is created with; the same rules as adding them one by one. */
export function resourcesAdded(resources: readonly SessionResource[]): SessionEvent[] {
  let held: readonly SessionResource[] = [];
  const events: SessionEvent[] = [];
  for (const resource of resources) {
    if (held.some((r) => r.id === resource.id)) throw new ValidationError(`resource id ${resource.id} is used twice`, 'resources');
    checkRoom(held, resource);
    held = [...held, resource];
    events.push({ type: 'SessionResourceAdded', data: { resource } });
  }
  return events;
}

/**
 * Attaching is idempotent on the resource id (a retried add with the same resource changes
 * nothing); two resources never share a mount path, nor does one sit inside another's.
 */
export function decideAddSessionResource(command: SessionCommandOf<'AddSessionResource'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  const { resource } = command.data;
  const existing = state.resources.find((r) => r.id === resource.id);
  if (existing !== undefined) {
    if (JSON.stringify(existing) === JSON.stringify(resource)) return [];
    throw new IllegalStateError(ErrorCodes.IDEMPOTENCY_KEY_CONFLICT, `resource ${resource.id} already exists with other settings`);
  }
  checkRoom(state.resources, resource);
  return [{ type: 'SessionResourceAdded', data: { resource } }];
}

export function decideRemoveSessionResource(command: SessionCommandOf<'RemoveSessionResource'>, state: SessionState): SessionEvent[] {
  requireExists(state, command.meta.session_id);
  requireTurnEligible(state, { rejectTerminated: false });
  if (!state.resources.some((r) => r.id === command.data.resource_id)) {
    throw new NotFoundError(`session resource ${command.data.resource_id} not found`, SessionErrorCodes.RESOURCE_NOT_FOUND);
  }
  return [{ type: 'SessionResourceRemoved', data: { resource_id: command.data.resource_id } }];
}

const overlaps = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

function checkRoom(held: readonly SessionResource[], resource: SessionResource): void {
  if (held.length >= MAX_SESSION_RESOURCES) {
    throw new IllegalStateError(SessionErrorCodes.TOO_MANY_RESOURCES, `a session holds at most ${MAX_SESSION_RESOURCES} resources`);
  }
  const clash = held.find((r) => overlaps(r.mount_path, resource.mount_path));
  if (clash !== undefined) {
    throw new IllegalStateError(SessionErrorCodes.MOUNT_PATH_CONFLICT, `mount path ${resource.mount_path} overlaps resource ${clash.id} at ${clash.mount_path}`, {
      resource_id: clash.id,
    });
  }
}
