import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import Docker from 'dockerode';
import { KubernetesSandboxRuntime, SANDBOX_NETWORK_POLICY, sandboxObjectName } from '@berth/kubernetes';
import { AnthropicMessagesServer, ensureDockerTestEngine, freePort, rbacAllows, RecordedKubernetesApi, reply, type NamespacedRules } from '@berth/testing';
import { parseAllDocuments } from 'yaml';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { E2E_MODEL_KEY, e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * The sandbox-manager process on the Kubernetes runtime (`BERTH_SANDBOX_RUNTIME=kubernetes`),
 * against a RECORDED-API STAND-IN, NOT A REAL CLUSTER: no Kubernetes API server can run on this
 * machine. The stand-in (`RecordedKubernetesApi`) answers the API calls in the real shapes and
 * runs each pod as a container on the Docker engine, on a Docker network of this test (the "pod
 * network"); the egress listens on that network's gateway address (the "egress Service") and
 * identifies each pod by its IP through the stand-in's API, as it would in a cluster. What it does
 * not show: the agent-sandbox controller, admission, RBAC, scheduling, real NetworkPolicy
 * enforcement (the policy the manager applies is checked against the API schema, not enforced).
 */
const STANDIN = 'RECORDED-API STAND-IN, not a real Kubernetes cluster';
const SANDBOX_NS = 'berth-sandboxes';
const TOKENS = { manager: 'sandbox-manager-token', egress: 'egress-token', test: 'test-token' } as const;

/** The rules deploy/kubernetes/kubernetes-sandboxes/rbac.yaml binds to a service account. */
function rolesOf(serviceAccount: string): NamespacedRules[] {
  const docs = parseAllDocuments(readFileSync(join(__dirname, '..', '..', '..', '..', 'deploy', 'kubernetes', 'kubernetes-sandboxes', 'rbac.yaml'), 'utf8')).map((d) => d.toJS());
  const bound = docs.filter((d) => d.kind === 'RoleBinding' && d.subjects.some((s: { name: string }) => s.name === serviceAccount)).map((b) => `${b.metadata.namespace}/${b.roleRef.name}`);
  return docs.filter((d) => d.kind === 'Role' && bound.includes(`${d.metadata.namespace}/${d.metadata.name}`)).map((r) => ({ namespace: r.metadata.namespace, rules: r.rules }));
}

let docker: Docker;
let network: string;
let api: RecordedKubernetesApi;
let model: AnthropicMessagesServer;
let platform: E2ePlatform;
let client: Anthropic;
let dir: string;
let runtime: KubernetesSandboxRuntime;
let egressAddress: string;

beforeAll(async () => {
  const engine = ensureDockerTestEngine({ harness: true });
  docker = new Docker({ socketPath: engine.dockerHost.replace(/^unix:\/\//, '') });
  // The pod network: internal (no way past the host), its gateway address is where the egress listens.
  network = `berth-k8s-pods-${process.pid}`;
  const created = await docker.createNetwork({ Name: network, Internal: true, Labels: { 'berth.test': 'kubernetes-standin' } });
  const gateway = (await created.inspect()).IPAM?.Config?.[0]?.Gateway as string;
  api = new RecordedKubernetesApi(docker, SANDBOX_NS, { podNetwork: network });
  const server = await api.start();
  const egressPort = await freePort();
  egressAddress = `${gateway}:${egressPort}`;
  api.addService('berth', { name: 'egress', clusterIP: gateway, port: egressPort, targetPort: egressPort, selector: { 'app.kubernetes.io/name': 'egress' } });
  dir = mkdtempSync(join(tmpdir(), 'berth-k8s-e2e-'));
  // One token per client, so that each one's calls can be checked against its Role in deploy/.
  const kubeconfigOf = (token: string) => {
    const path = join(dir, `kubeconfig-${token}`);
    writeFileSync(
      path,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'stand-in', cluster: { server, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'berth', user: { token } }],
        contexts: [{ name: 'stand-in', context: { cluster: 'stand-in', user: 'berth', namespace: SANDBOX_NS } }],
        'current-context': 'stand-in',
      }),
    );
    return path;
  };
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigOf(TOKENS.test));
  runtime = new KubernetesSandboxRuntime({ kubeConfig: kc, namespace: SANDBOX_NS });
  process.stdout.write(`sandbox-manager on Kubernetes against a ${STANDIN}: ${server}\n`);
  model = await new AnthropicMessagesServer().start();
  platform = await startE2ePlatform({
    modelBaseUrl: model.url,
    managerEnv: { BERTH_SANDBOX_RUNTIME: 'kubernetes', BERTH_K8S_KUBECONFIG: kubeconfigOf(TOKENS.manager), BERTH_K8S_NAMESPACE: SANDBOX_NS, BERTH_K8S_EGRESS_SERVICE: 'berth/egress' },
    egressEnv: { BERTH_EGRESS_LISTEN: egressAddress, BERTH_EGRESS_K8S_NAMESPACE: SANDBOX_NS, BERTH_EGRESS_K8S_KUBECONFIG: kubeconfigOf(TOKENS.egress) },
  });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  await api?.close();
  await model?.close();
  if (network) await docker.getNetwork(network).remove().catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 120_000);

describe(`the sandbox-manager on the Kubernetes runtime, against a ${STANDIN}`, () => {
  it('applied at start the NetworkPolicy that confines sandbox pods to the egress Service', () => {
    const policy = api.objectsOf('networkpolicies').find((p) => p.metadata.name === SANDBOX_NETWORK_POLICY);
    expect(policy).toBeDefined();
    expect(() => new NetworkPolicy(policy as never).validate()).not.toThrow();
    expect((policy as unknown as { spec: unknown }).spec).toEqual({
      podSelector: { matchLabels: { 'berth.managed': 'true', 'berth.scope': platform.scope } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress: [
        {
          to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'berth' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'egress' } } }],
          ports: [{ protocol: 'TCP', port: Number(egressAddress.split(':')[1]) }],
        },
      ],
    });
  });

  it('binds a session to an agent-sandbox Sandbox and runs a Claude Code turn in its pod: the model reached through the egress Service with the key added, the workspace on a claim', async () => {
    const agent = await client.beta.agents.create({ name: 'k8s-agent', model: 'claude-sonnet-4-6', system: 'You run in a Kubernetes pod.', tools: [{ type: 'agent_toolset_20260401' }] });
    const environment = await client.beta.environments.create({ name: 'k8s-env', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
    const session = await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id });
    model.script(reply.toolCall('Bash', { command: 'echo from-the-pod > /workspace/pod.txt && cat /workspace/pod.txt', description: 'write' }), reply.text('Written.'));
    const requests = model.modelRequests.length;

    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Write a file' }] }] });
    const events = await waitFor('the turn to end', async () => {
      const all = await listEvents(client, session.id);
      return all.some((e) => e.type === 'session.status_idle' && (e['stop_reason'] as { type?: string } | undefined)?.type === 'end_turn') ? all : null;
    }, 240_000, platform.logs);

    // Bound to the session's Sandbox (its object name the hash of the Berth name), its pod running.
    const name = `berth-s-${session.id}-g1`;
    const info = await runtime.inspect(name);
    expect(info).toMatchObject({ id: sandboxObjectName(name), name, running: true });
    // The turn: the agent's model and system prompt, through the egress (the model server saw the key, the pod holds none).
    const request = model.modelRequests[requests]?.body as { model?: string };
    expect(request.model).toBe('claude-sonnet-4-6');
    expect(JSON.stringify(request)).toContain('You run in a Kubernetes pod.');
    expect(model.sawCredential(E2E_MODEL_KEY)).toBe(true);
    expect(JSON.stringify(events.find((e) => e.type === 'agent.tool_result'))).toContain('from-the-pod');
    const env = (await runtime.exec(name, { cmd: ['cat', '/proc/1/environ'] })).lines;
    let environ = '';
    for await (const line of env) environ += line;
    expect(environ).toContain(`BERTH_EGRESS_TCP=${egressAddress}`);
    expect(environ).not.toContain(E2E_MODEL_KEY);
    // The egress CA, published by the egress as a ConfigMap, mounted where the pod's clients are told to look.
    const ca = (await runtime.readFile(name, '/run/berth/ca.pem'))?.toString() ?? '';
    expect(ca).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(api.objectsOf('configmaps').find((c) => c.metadata.name === 'berth-egress-trust')?.['data']).toMatchObject({ 'ca.pem': ca });
    // The workspace is the session's PersistentVolumeClaim, mounted in the pod.
    const sandbox = (await (await fetch(`${api.url}/apis/agents.x-k8s.io/v1beta1/namespaces/${SANDBOX_NS}/sandboxes/${sandboxObjectName(name)}`, { headers: { authorization: `Bearer ${TOKENS.test}` } })).json()) as { spec: { podTemplate: { spec: { volumes: { persistentVolumeClaim?: { claimName: string } }[] } } } };
    const claims = sandbox.spec.podTemplate.spec.volumes.flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
    expect(claims).toHaveLength(2);
    expect(api.objectsOf('persistentvolumeclaims').map((c) => c.metadata.name)).toEqual(expect.arrayContaining(claims));
    expect((await runtime.readFile(name, '/workspace/pod.txt'))?.toString()).toBe('from-the-pod\n');
  }, 300_000);

  it('serves the next session from Berth\'s warm pool of Sandboxes: claimed, renamed on the Sandbox and its pod, and served as that session by the egress', async () => {
    const agent = await client.beta.agents.create({ name: 'k8s-warm', model: 'claude-sonnet-4-6', system: 'You run in a warm pod.', tools: [{ type: 'agent_toolset_20260401' }] });
    const environment = await client.beta.environments.create({ name: 'k8s-warm-env', config: e2eEnvironmentConfig({ harness: 'claude-code', warm_pool_size: 1 }) });
    const bound = (sessionId: string) =>
      waitFor(`${sessionId} bound`, async () => (await listEvents(client, sessionId)).find((e) => e.type === 'berth.sandbox_bound'), 120_000, platform.logs);
    await bound((await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id })).id);
    await waitFor('a warm Sandbox for the environment', async () => (await runtime.list({ 'berth.pool': environment.id })).some((s) => s.running), 120_000, platform.logs);

    const next = await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id });
    expect(await bound(next.id)).toMatchObject({ warm: true });
    const name = `berth-s-${next.id}-g1`;
    const pod = api.objectsOfPods().find((p) => p.metadata.labels['berth.name'] === name);
    expect(pod).toBeDefined();
    model.script(reply.text('Warm and well.'));
    const requests = model.modelRequests.length;
    await client.beta.sessions.events.send(next.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Are you warm?' }] }] });
    const events = await waitFor('the warm turn to end', async () => {
      const all = await listEvents(client, next.id);
      return all.some((e) => e.type === 'session.status_idle' && (e['stop_reason'] as { type?: string } | undefined)?.type === 'end_turn') ? all : null;
    }, 240_000, platform.logs);
    expect(JSON.stringify(model.modelRequests[requests]?.body)).toContain('You run in a warm pod.');
    expect(JSON.stringify(events.filter((e) => e.type === 'agent.message'))).toContain('Warm and well.');
  }, 300_000);

  describe('what pods cannot do yet is refused with its reason, never skipped', () => {
    const failedTurn = async (config: Record<string, unknown>, tools: Anthropic.Beta.Agents.AgentCreateParams['tools']) => {
      const agent = await client.beta.agents.create({ name: 'k8s-refused', model: 'claude-sonnet-4-6', system: 'You are refused.', tools });
      const environment = await client.beta.environments.create({ name: 'k8s-refused-env', config: e2eEnvironmentConfig({ harness: 'claude-code', ...config }) });
      const session = await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
      return waitFor('the refused turn', async () => {
        const all = await listEvents(client, session.id);
        return all.some((e) => e.type === 'session.status_idle') ? all : null;
      }, 120_000, platform.logs);
    };

    it('environment packages: the sandbox fails to start, saying to put them in the image', async () => {
      const all = await failedTurn({ packages: { apt: ['jq'] } }, [{ type: 'agent_toolset_20260401' }]);
      expect(JSON.stringify(all.find((e) => e.type === 'session.error'))).toContain('the Kubernetes runtime builds none: put the packages in BERTH_SANDBOX_IMAGE');
      expect(all.find((e) => e.type === 'session.status_idle')).toMatchObject({ berth_failure: { reason: 'sandbox_start_failed' } });
    }, 180_000);

    it('custom tools: the turn fails resource_unavailable before the harness starts', async () => {
      const weather = { type: 'custom' as const, name: 'get_weather', description: 'The weather.', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } };
      const requests = model.modelRequests.length;
      const all = await failedTurn({}, [{ type: 'agent_toolset_20260401' }, weather]);
      expect(JSON.stringify(all.find((e) => e.type === 'session.error'))).toContain('the agent has custom tools');
      expect(all.find((e) => e.type === 'session.status_idle')).toMatchObject({ berth_failure: { reason: 'resource_unavailable' } });
      expect(model.modelRequests.length).toBe(requests);
    }, 180_000);
  });
});

// Last (its own block, so it runs after every test above): every call the two services made.
describe(`the grants in deploy/kubernetes/kubernetes-sandboxes, against a ${STANDIN}`, () => {
  it('made only calls the Roles in deploy/kubernetes/kubernetes-sandboxes grant each service', () => {
    for (const [account, token] of [['sandbox-manager', TOKENS.manager], ['egress', TOKENS.egress]] as const) {
      const made = api.requests.filter((r) => r.token === token);
      expect(made.length).toBeGreaterThan(0);
      const roles = rolesOf(account);
      const denied = [...new Set(made.filter((r) => !rbacAllows(roles, r)).map((r) => `${r.method} ${r.path}${r.watch ? '?watch' : ''}${r.websocket ? ' (websocket)' : ''}`))];
      expect({ account, denied }).toEqual({ account, denied: [] });
    }
    // Every call came from one of the three clients (none unattributed, none unchecked).
    expect(api.requests.filter((r) => !Object.values(TOKENS).includes(r.token as never))).toEqual([]);
  });
});

