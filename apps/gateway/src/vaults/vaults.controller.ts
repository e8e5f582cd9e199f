import { Controller, Inject } from '@nestjs/common';
import { Input } from '../http/input.decorator';
import { ApiRoute, type RouteInput } from '../http/route';
import { VaultRoutes as R } from './vaults.schemas';
import { VaultsService } from './vaults.service';

@Controller()
export class VaultsController {
  constructor(@Inject(VaultsService) private readonly vaults: VaultsService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.vaults.create(i.owner, i.body);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.vaults.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.vaults.get(i.owner, i.params.vault_id);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.vaults.update(i.owner, i.params.vault_id, i.body);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.vaults.delete(i.owner, i.params.vault_id);
  }

  @ApiRoute(R.archive)
  archive(@Input() i: RouteInput<typeof R.archive>) {
    return this.vaults.archive(i.owner, i.params.vault_id);
  }

  @ApiRoute(R.createCredential)
  createCredential(@Input() i: RouteInput<typeof R.createCredential>) {
    return this.vaults.createCredential(i.owner, i.params.vault_id, i.body);
  }

  @ApiRoute(R.listCredentials)
  listCredentials(@Input() i: RouteInput<typeof R.listCredentials>) {
    return this.vaults.listCredentials(i.owner, i.params.vault_id, i.query);
  }

  @ApiRoute(R.getCredential)
  getCredential(@Input() i: RouteInput<typeof R.getCredential>) {
    return this.vaults.getCredential(i.owner, i.params.vault_id, i.params.credential_id);
  }

  @ApiRoute(R.updateCredential)
  updateCredential(@Input() i: RouteInput<typeof R.updateCredential>) {
    return this.vaults.updateCredential(i.owner, i.params.vault_id, i.params.credential_id, i.body);
  }

  @ApiRoute(R.deleteCredential)
  deleteCredential(@Input() i: RouteInput<typeof R.deleteCredential>) {
    return this.vaults.deleteCredential(i.owner, i.params.vault_id, i.params.credential_id);
  }

  @ApiRoute(R.validateMcpOAuth)
  validateMcpOAuth(@Input() i: RouteInput<typeof R.validateMcpOAuth>) {
    return this.vaults.validateMcpOAuth(i.owner, i.params.vault_id, i.params.credential_id);
  }

  @ApiRoute(R.archiveCredential)
  archiveCredential(@Input() i: RouteInput<typeof R.archiveCredential>) {
    return this.vaults.archiveCredential(i.owner, i.params.vault_id, i.params.credential_id);
  }
}
