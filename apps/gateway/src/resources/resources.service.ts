import { NotFoundError, ValidationError } from '@berth/core';
import type { SessionResource } from '@berth/contracts';
import type { SessionRecord } from '@berth/ports';
import type { SessionUseCases } from '@berth/session-use-cases';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { ResourceResolver } from './resource-resolver';
import type { ResourceParams } from './resources.schemas';

const resourceNotFound = () => new NotFoundError('session resource not found', 'RESOURCE_NOT_FOUND');

/** The resources the kernel's view of a session holds, in the order they were added. */
const resourcesOf = (record: SessionRecord): readonly SessionResource[] => (Array.isArray(record.view.resources) ? (record.view.resources as SessionResource[]) : []);

/** `/v1/sessions/{id}/resources`: resources are session state, so every write is a session use case (a kernel command). */
export class ResourcesService {
  constructor(private readonly d: Readonly<{ useCases: SessionUseCases; resolver: ResourceResolver }>) {}

  async add(owner: string, sessionId: string, params: ResourceParams): Promise<SessionResource> {
    await this.d.useCases.find(owner, sessionId);
    const attach = await this.d.resolver.resolve(owner, params);
    await this.d.useCases.addResource(owner, sessionId, attach);
    return attach.resource;
  }

  async list(owner: string, sessionId: string, query: Readonly<{ limit?: number; page?: string }>) {
    const all = resourcesOf(await this.d.useCases.find(owner, sessionId));
    const start = query.page === undefined ? 0 : offsetOf(query.page);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const next = start + limit < all.length ? Buffer.from(JSON.stringify({ resources: start + limit })).toString('base64url') : null;
    return { data: all.slice(start, start + limit), next_page: next };
  }

  async get(owner: string, sessionId: string, resourceId: string): Promise<SessionResource> {
    const resource = resourcesOf(await this.d.useCases.find(owner, sessionId)).find((r) => r.id === resourceId);
    if (resource === undefined) throw resourceNotFound();
    return resource;
  }

  /** Token rotation: the next clone the platform makes for this repository uses the new token. */
  async update(owner: string, sessionId: string, resourceId: string, token: string): Promise<SessionResource> {
    const resource = await this.get(owner, sessionId, resourceId);
    if (resource.type !== 'github_repository') throw new ValidationError('only github_repository resources have an authorization_token', 'authorization_token');
    await this.d.useCases.replaceResourceToken(owner, sessionId, resourceId, token);
    return resource;
  }

  async delete(owner: string, sessionId: string, resourceId: string) {
    await this.get(owner, sessionId, resourceId);
    await this.d.useCases.removeResource(owner, sessionId, resourceId);
    return { id: resourceId, type: 'session_resource_deleted' as const };
  }
}

function offsetOf(page: string): number {
  try {
    const parsed = JSON.parse(Buffer.from(page, 'base64url').toString('utf8')) as { resources?: unknown };
    if (typeof parsed.resources === 'number' && Number.isInteger(parsed.resources) && parsed.resources >= 0) return parsed.resources;
  } catch {
    // fall through: not one of ours
  }
  throw new ValidationError('page is not a valid cursor for this list', 'page');
}
