import { KubeConfig } from '@kubernetes/client-node';
import Docker from 'dockerode';
 
// eslint-disable-next-line @nx/enforce-module-boundaries -- the shared runtime contract and the recorded API live in the testing library
import { describeSandboxRuntimeContract, ensureDockerTestEngine, RecordedKubernetesApi } from '@berth/testing';
import { KubernetesSandboxRuntime } from './kubernetes-sandbox-runtime';

jest.setTimeout(90_000);

/**
 * The Kubernetes runtime under the same contract as the Docker one. No Kubernetes API server can
 * run on this machine (no kind, k3s or kube-apiserver package, no registry to pull one from), so
 * it runs against RecordedKubernetesApi: the API calls the runtime makes, answered in the real
 * API's shapes, its pods run as containers on the Docker engine. Said in the suite's name.
 */
const TARGET = 'Kubernetes (agents.x-k8s.io Sandbox) against a RECORDED-API STAND-IN, not a real API server (none can run here)';

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'stand-in', server, skipTLSVerify: true }],
    users: [{ name: 'berth', token: 'stand-in-token' }],
    contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'berth', namespace: 'berth' }],
    currentContext: 'stand-in',
  });
  return kc;
}

const engine = ensureDockerTestEngine();
let api: RecordedKubernetesApi;

describeSandboxRuntimeContract(TARGET, async () => {
  const docker = new Docker({ socketPath: engine.dockerHost.replace(/^unix:\/\//, '') });
  api = new RecordedKubernetesApi(docker, 'berth');
  const server = await api.start();
  process.stdout.write(`${TARGET}: ${server}\n`);
  return {
    runtime: new KubernetesSandboxRuntime({ kubeConfig: kubeConfig(server), namespace: 'berth' }),
    image: engine.baseImage,
    kill: async (sandbox) => void (await docker.getContainer(api.containerOf(sandbox.id)).kill()),
    dispose: () => api.close(),
  };
});

describe('what the Kubernetes runtime asked of the API', () => {
  it('used only agent-sandbox Sandboxes, pods, their watch and exec: no Deployment, no hostPath, no service account', () => {
    const paths = new Set(api.calls.map((c) => c.replace(/\/(sandboxes|pods)\/[^/ ]+/, '/$1/{name}')));
    expect([...paths].sort()).toEqual(
      expect.arrayContaining([
        'POST /apis/agents.x-k8s.io/v1beta1/namespaces/berth/sandboxes',
        'GET /apis/agents.x-k8s.io/v1beta1/namespaces/berth/sandboxes',
        'PATCH /apis/agents.x-k8s.io/v1beta1/namespaces/berth/sandboxes/{name}',
        'DELETE /apis/agents.x-k8s.io/v1beta1/namespaces/berth/sandboxes/{name}',
        'GET /api/v1/namespaces/berth/pods/{name}',
        'GET /api/v1/namespaces/berth/pods',
        'GET /api/v1/namespaces/berth/pods/{name}/exec (websocket)',
      ]),
    );
    for (const path of paths) expect(path).toMatch(/^(GET|POST|PATCH|DELETE) \/(apis\/agents\.x-k8s\.io\/v1beta1|api\/v1)\/namespaces\/berth\/(sandboxes|pods)/);
  });
});
