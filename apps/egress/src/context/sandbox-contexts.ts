import { credentialPlaceholder, decodeCredentialSecret, type CredentialSecret } from '@berth/contracts';
import {
  egressPolicyFrom,
  imageBuildPolicy,
  modelEndpointFrom,
  type BoundCredential,
  type EgressPolicy,
  type ImageBuildGrant,
  type ModelEndpoint,
  type ModelKeyHeader,
  type ServerModelSettings,
  type VariableCredential,
} from '@berth/egress-domain';
import { harnessAdapterFor } from '@berth/harness';
import type { AgentStore, EnvironmentStore, Logger, SecretBox, VaultStore } from '@berth/ports';
import { sessionOfSandboxName } from '@berth/sandbox-domain';
import type { SessionKernel } from '@berth/session-kernel';

/** Who a sandbox is, and what its environment lets it reach: read from the store, never from the sandbox. */
export type SandboxContext = Readonly<{
  kind: 'sandbox';
  sandboxName: string;
  sessionId: string;
  generation: number;
  ownerId: string;
  environmentId: string;
  /** The turn running now, if any (refusals are reported against it). */
  turnId: string | null;
  policy: EgressPolicy;
  /** Null when neither the server nor the environment names a model endpoint. */
  model: ModelEndpoint | null;
  keyHeader: ModelKeyHeader;
  /** The MCP credentials of the session's vaults, opened (live ones only: an archived vault or credential is left out). */
  credentials: readonly BoundCredential[];
  /** Its `environment_variable` credentials, opened likewise. */
  variables: readonly VariableCredential[];
}>;

/**
 * An environment image build's container (the sandbox-manager's, no session's): it reaches only
 * what its grant names (under the platform rule), never a model, and no session hears its refusals.
 */
export type BuildContext = Readonly<{ kind: 'build'; sandboxName: string; environmentId: string; grant: ImageBuildGrant; policy: EgressPolicy }>;

/** The sandbox behind a socket is not (or no longer) a session's bound sandbox: it gets nothing. */
export type Unbound = Readonly<{ unbound: string }>;

export const isUnbound = (c: SandboxContext | BuildContext | Unbound): c is Unbound => 'unbound' in c;

/**
 * Who is behind a connection, as the platform recorded it (never as the sandbox says): the Berth
 * name of the sandbox behind an identity (an egress directory, a pod IP), or why there is none.
 */
export type SandboxNames = Readonly<{
  nameOf(identity: string): Promise<Readonly<{ name: string }> | Unbound>;
  /** What an image build may reach when the identity is a build's (egress directories only: the manager writes the grant there), null for a sandbox. */
  buildGrantOf?(identity: string): Promise<ImageBuildGrant | Unbound | null>;
  /** Reports identities that stopped naming what they named (a pod IP freed), until `signal` aborts. */
  follow?(signal: AbortSignal, onGone: (identity: string) => void): Promise<void>;
}>;

export type SandboxContextsDeps = Readonly<{
  names: SandboxNames;
  sessions: Pick<SessionKernel, 'load'>;
  environments: Pick<EnvironmentStore, 'get'>;
  agents: Pick<AgentStore, 'get'>;
  vaults: Pick<VaultStore, 'activeCredentials'>;
  /** Opens vault secrets (the gateway seals them under the same BERTH_SECRET_KEYS). */
  secrets: SecretBox;
  log: Logger;
  model: ServerModelSettings;
  cacheMs: number;
  now?: () => number;
}>;

/**
 * Resolves the sandbox behind an identity. `names` gives the sandbox's current Berth name as the
 * platform recorded it (an egress directory's `name` file, a pod's Sandbox label), hence session
 * and generation; the session's journal must show exactly that sandbox bound, and the session's
 * environment and agent give the policy and the model endpoint. Nothing the sandbox sends takes
 * part: where a request arrives from is its identity. Results are kept `cacheMs`.
 */
export class SandboxContexts {
  private readonly cache = new Map<string, { at: number; value: Promise<SandboxContext | BuildContext | Unbound> }>();
  private readonly now: () => number;

  constructor(private readonly deps: SandboxContextsDeps) {
    this.now = deps.now ?? Date.now;
  }

  resolve(identity: string): Promise<SandboxContext | BuildContext | Unbound> {
    const cached = this.cache.get(identity);
    if (cached !== undefined && this.now() - cached.at < this.deps.cacheMs) return cached.value;
    const value = this.load(identity);
    const entry = { at: this.now(), value };
    this.cache.set(identity, entry);
    // Only a bound sandbox's context is kept: a refusal or a failed read is read again next time
    // (a sandbox claimed or bound a moment ago must not be refused from a stale answer).
    const drop = () => {
      if (this.cache.get(identity) === entry) this.cache.delete(identity);
    };
    value.then((context) => isUnbound(context) && drop(), drop);
    return value;
  }

  forget(identity: string): void {
    this.cache.delete(identity);
  }

  /** The context read from the store now, whatever is cached (a credential that looked expired may have been refreshed meanwhile). */
  reread(identity: string): Promise<SandboxContext | BuildContext | Unbound> {
    this.forget(identity);
    return this.resolve(identity);
  }

  private async load(identity: string): Promise<SandboxContext | BuildContext | Unbound> {
    const named = await this.deps.names.nameOf(identity);
    if ('unbound' in named) return named;
    const { name } = named;
    const build = await this.build(identity, name);
    if (build !== null) return build;
    const owner = sessionOfSandboxName(name);
    if (owner === null) return { unbound: `sandbox ${name} is not bound to a session (a warm sandbox not claimed yet)` };
    const { state } = await this.deps.sessions.load(owner.sessionId);
    const bound = state.sandbox;
    if (!state.exists || state.lifecycle === 'DELETED' || bound === null || state.runtime_unavailable || bound.sandbox_id !== name || bound.generation !== owner.generation) {
      return { unbound: `sandbox ${name} is not the sandbox session ${owner.sessionId} has bound now` };
    }
    const [environment, agent, { credentials, variables }] = await Promise.all([
      this.deps.environments.get(state.owner_id, state.environment_id),
      this.deps.agents.get(state.owner_id, state.agent.id, state.agent.version),
      // A snapshot written before sessions had vaults lacks the field: such a session has none.
      this.credentials(owner.sessionId, state.owner_id, (state.vault_ids as readonly string[] | undefined) ?? []),
    ]);
    if (environment === null) return { unbound: `the environment ${state.environment_id} of session ${owner.sessionId} is gone` };
    return {
      kind: 'sandbox',
      sandboxName: name,
      sessionId: owner.sessionId,
      generation: owner.generation,
      ownerId: state.owner_id,
      environmentId: state.environment_id,
      turnId: state.current_turn?.id ?? null,
      policy: egressPolicyFrom(state.environment_id, environment.config, agent?.config ?? {}),
      model: modelEndpointFrom(environment.config, this.deps.model),
      keyHeader: harnessAdapterFor(state.harness).capabilities.modelKeyHeader,
      credentials,
      variables,
    };
  }

  /** An image build's grant when the identity is a build's (only egress directories hold builds), else null. */
  private async build(identity: string, name: string): Promise<BuildContext | Unbound | null> {
    const grant = (await this.deps.names.buildGrantOf?.(identity)) ?? null;
    if (grant === null) return null;
    if ('unbound' in grant) return { unbound: `image build ${name}: ${grant.unbound}` };
    return { kind: 'build', sandboxName: name, environmentId: grant.environmentId, grant, policy: imageBuildPolicy(grant) };
  }

  /** The session's credentials (vaults of the session's owner only), opened; one that does not open is left out and logged by id. */
  private async credentials(sessionId: string, ownerId: string, vaultIds: readonly string[]): Promise<{ credentials: BoundCredential[]; variables: VariableCredential[] }> {
    const credentials: BoundCredential[] = [];
    const variables: VariableCredential[] = [];
    if (vaultIds.length === 0) return { credentials, variables };
    for (const record of await this.deps.vaults.activeCredentials(ownerId, vaultIds)) {
      let secret: CredentialSecret;
      try {
        secret = decodeCredentialSecret(this.deps.secrets.open(record.secret, record.id));
      } catch (error) {
        this.deps.log.warn('a vault credential does not open: it is not injected', { session_id: sessionId, vault_id: record.vault_id, credential_id: record.id, code: (error as { code?: string }).code ?? null });
        continue;
      }
      const { auth } = record;
      if (auth.type === 'environment_variable') {
        const hosts = auth.networking.type === 'limited' ? auth.networking.allowed_hosts : null;
        variables.push({ credentialId: record.id, placeholder: credentialPlaceholder(record.id), secret: secret.value, hosts, header: auth.injection_location.header, body: auth.injection_location.body });
      } else {
        credentials.push({
          credentialId: record.id,
          vaultId: record.vault_id,
          mcpServerUrl: auth.mcp_server_url,
          token: secret.value,
          expiresAt: auth.type === 'mcp_oauth' ? auth.expires_at : null,
          refreshes: auth.type === 'mcp_oauth' && Boolean(auth.refresh),
        });
      }
    }
    return { credentials, variables };
  }
}
