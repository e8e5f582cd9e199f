import {
  environmentConfigFrom,
  environmentConfigIssues,
  patchMetadata,
  readEnvironmentConfig,
  refuseConfigIssues,
  type EnvironmentConfig,
  type EnvironmentCreateParams,
  type EnvironmentUpdateParams,
} from '@berth/contracts';
import { BerthError, IllegalStateError, NotFoundError, ValidationError, type Clock, type IdGenerator } from '@berth/core';
import type { EnvironmentRecord, EnvironmentStore } from '@berth/ports';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { RouteInput } from '../http/route';
import type { ResourceWebhooks } from '../webhooks/delivery/resource-webhooks';
import { renderEnvironment } from './environment.render';
import type { EnvironmentRoutes } from './environments.schemas';

export const environmentNotFound = () => new NotFoundError('environment not found', 'ENVIRONMENT_NOT_FOUND');

/** Environments are plain configuration: written straight to the store. */
export class EnvironmentsService {
  constructor(
    private readonly environments: EnvironmentStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly webhooks: Pick<ResourceWebhooks, 'plan'>,
    private readonly allowHostNetwork = false,
  ) {}

  /** The live (not deleted) environment, or 404. */
  async find(owner: string, id: string): Promise<EnvironmentRecord> {
    const env = await this.environments.get(owner, id);
    if (!env || env.deleted) throw environmentNotFound();
    return env;
  }

  async create(owner: string, body: EnvironmentCreateParams) {
    const fields = { name: body.name, description: body.description ?? null, metadata: body.metadata ?? {} };
    return renderEnvironment(await this.createFrom(owner, fields, environmentConfigFrom(body.config)));
  }

  /**
   * A new environment with this stored config (a create, or an import recreating an archived one), refused as a create refuses it.
   * `id`: an import's, named from its Idempotency-Key.
   */
  async createFrom(owner: string, fields: Pick<EnvironmentRecord, 'name' | 'description' | 'metadata'>, config: EnvironmentConfig, id = this.ids.next('env')): Promise<EnvironmentRecord> {
    this.refuseUnsupported(config);
    const now = this.clock.now().toISOString();
    const record: EnvironmentRecord = {
      id,
      owner_id: owner,
      ...fields,
      config,
      created_at: now,
      updated_at: now,
      archived_at: null,
      deleted: false,
    };
    // Inserted, never replaced: an import's id named from its key may be made by a concurrent attempt first (ConcurrencyError).
    await this.environments.insert(record, await this.webhooks.plan({ type: 'environment.created', id: record.id, ownerId: owner, at: now }));
    return record;
  }

  async list(owner: string, query: RouteInput<typeof EnvironmentRoutes.list>['query']) {
    const page = await this.environments.list(owner, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, include_archived: query.include_archived ?? false });
    return { data: page.data.filter((e) => !e.deleted).map(renderEnvironment), next_page: page.next_page };
  }

  async get(owner: string, id: string) {
    return renderEnvironment(await this.find(owner, id));
  }

  async update(owner: string, id: string, body: EnvironmentUpdateParams) {
    const env = await this.find(owner, id);
    if (env.archived_at !== null) throw new IllegalStateError('ENVIRONMENT_ARCHIVED', 'an archived environment cannot be updated');
    const current = readEnvironmentConfig(env.config);
    if (body.config && body.config.type !== current.type) {
      throw new ValidationError(`config.type cannot change from ${current.type} to ${body.config.type}`, 'config.type');
    }
    this.refuseHostNetwork(body.config?.network);
    const config = body.config ? environmentConfigFrom(body.config, current) : current;
    refuseConfigIssues(environmentConfigIssues(config));
    const updated: EnvironmentRecord = {
      ...env,
      name: body.name ?? env.name,
      description: body.description === undefined ? env.description : body.description,
      config,
      metadata: patchMetadata(env.metadata, body.metadata),
      updated_at: this.clock.now().toISOString(),
    };
    await this.environments.put(updated, await this.webhooks.plan({ type: 'environment.updated', id, ownerId: owner, at: updated.updated_at }));
    return renderEnvironment(updated);
  }

  async archive(owner: string, id: string) {
    const env = await this.find(owner, id);
    if (env.archived_at !== null) return renderEnvironment(env);
    const now = this.clock.now().toISOString();
    const archived: EnvironmentRecord = { ...env, archived_at: now, updated_at: now };
    await this.environments.put(archived, await this.webhooks.plan({ type: 'environment.archived', id, ownerId: owner, at: now }));
    return renderEnvironment(archived);
  }

  async delete(owner: string, id: string) {
    const env = await this.find(owner, id);
    const at = this.clock.now().toISOString();
    await this.environments.put({ ...env, deleted: true, updated_at: at }, await this.webhooks.plan({ type: 'environment.deleted', id: env.id, ownerId: owner, at }));
    return { id: env.id, type: 'environment_deleted' };
  }

  /** What a create refuses in a config: the host network unless the operator allows it, and what Berth cannot honour yet. */
  refuseUnsupported(config: EnvironmentConfig): void {
    this.refuseHostNetwork(config.network);
    refuseConfigIssues(environmentConfigIssues(config));
  }

  /**
   * A sandbox on the host network reaches everything the host does, the platform included: only
   * the operator can allow it (`BERTH_ALLOW_HOST_NETWORK`).
   */
  private refuseHostNetwork(network: string | undefined): void {
    if (network !== 'host' || this.allowHostNetwork) return;
    throw new BerthError(
      'HOST_NETWORK_NOT_ALLOWED',
      400,
      'config.network "host" is not allowed on this server: sandboxes on the host network reach the platform. Leave config.network out (its default, "egress", reaches what config.networking allows) or use "none".',
      { field: 'config.network' },
    );
  }
}
