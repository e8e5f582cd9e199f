import { defaultFileMountPath, defaultRepositoryMountPath, type SessionResource } from '@berth/contracts';
import type { Clock, IdGenerator } from '@berth/core';
import type { SessionSecrets } from '@berth/ports';
import type { FilesService } from '../files/files.service';
import type { ResourceParams } from './resources.schemas';

/**
 * Turns what a client sent into the resource the journal records: an id, the default mount path,
 * the file checked to be the caller's. A repository token goes to the session secrets under the
 * resource id, before the command that makes the sandbox-manager look for it.
 */
export class ResourceResolver {
  constructor(
    private readonly d: Readonly<{ files: FilesService; secrets: SessionSecrets; clock: Clock; ids: IdGenerator }>,
  ) {}

  async resolve(owner: string, sessionId: string, params: ResourceParams): Promise<SessionResource> {
    const id = this.d.ids.next('sesrsc');
    const now = this.d.clock.now().toISOString();
    if (params.type === 'file') {
      const file = await this.d.files.find(owner, params.file_id);
      return { type: 'file', id, file_id: file.id, mount_path: params.mount_path ?? defaultFileMountPath(file.id), created_at: now, updated_at: now };
    }
    if (params.type !== 'github_repository') throw new Error('unreachable: memory_store is refused by the schema');
    if (params.authorization_token !== undefined) await this.d.secrets.put(sessionId, id, params.authorization_token);
    return {
      type: 'github_repository',
      id,
      url: params.url,
      checkout: params.checkout ?? null,
      mount_path: params.mount_path ?? defaultRepositoryMountPath(params.url),
      created_at: now,
      updated_at: now,
    };
  }
}
