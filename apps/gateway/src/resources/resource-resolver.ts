import { defaultFileMountPath, defaultRepositoryMountPath, repositoryUrlProblem } from '@berth/contracts';
import { BerthError, type Clock, type IdGenerator } from '@berth/core';
import type { ResourceToAttach } from '@berth/session-use-cases';
import type { FilesService } from '../files/files.service';
import type { ResourceParams } from './resources.schemas';

/**
 * Turns what a client sent into the resource the journal records: an id, the default mount path,
 * the file checked to be the caller's, a repository's URL checked to be plain http(s) (no
 * `file://`, `ssh://`, `ext::`, no credentials in it). A repository's token is handed on beside it, for the
 * session secrets, never inside it.
 */
export class ResourceResolver {
  constructor(private readonly d: Readonly<{ files: FilesService; clock: Clock; ids: IdGenerator }>) {}

  async resolve(owner: string, params: ResourceParams): Promise<ResourceToAttach> {
    const id = this.d.ids.next('sesrsc');
    const now = this.d.clock.now().toISOString();
    if (params.type === 'file') {
      const file = await this.d.files.find(owner, params.file_id);
      return { resource: { type: 'file', id, file_id: file.id, mount_path: params.mount_path ?? defaultFileMountPath(file.id), created_at: now, updated_at: now }, token: null };
    }
    if (params.type !== 'github_repository') throw new Error('unreachable: memory_store is refused by the schema');
    const problem = repositoryUrlProblem(params.url);
    if (problem !== null) throw new BerthError('REPOSITORY_URL_NOT_SUPPORTED', 400, `url ${problem} (repositories are cloned over http(s) only, through the sandbox's egress)`, { field: 'url' });
    return {
      resource: {
        type: 'github_repository',
        id,
        url: params.url,
        checkout: params.checkout ?? null,
        mount_path: params.mount_path ?? defaultRepositoryMountPath(params.url),
        created_at: now,
        updated_at: now,
      },
      token: params.authorization_token ?? null,
    };
  }
}
