import { rbacAllows, requestAttributes, type NamespacedRules } from './rbac-check';

const request = (method: string, path: string, over: { watch?: boolean; websocket?: boolean } = {}) => ({ method, path, watch: false, websocket: false, token: null, ...over });
const roles: NamespacedRules[] = [
  {
    namespace: 'sbx',
    rules: [
      { apiGroups: ['agents.x-k8s.io'], resources: ['sandboxes'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['pods/exec'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['trust'], verbs: ['update'] },
    ],
  },
];

describe('the RBAC check of recorded calls', () => {
  it('reads the authorizer\'s attributes from a request', () => {
    expect(requestAttributes(request('GET', '/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes'))).toEqual({ namespace: 'sbx', apiGroup: 'agents.x-k8s.io', resource: 'sandboxes', name: null, verb: 'list' });
    expect(requestAttributes(request('GET', '/api/v1/namespaces/sbx/pods', { watch: true }))).toMatchObject({ apiGroup: '', resource: 'pods', verb: 'watch' });
    expect(requestAttributes(request('GET', '/api/v1/namespaces/sbx/pods/p1/exec', { websocket: true }))).toMatchObject({ resource: 'pods/exec', name: 'p1', verb: 'create' });
    expect(requestAttributes(request('PUT', '/api/v1/namespaces/sbx/configmaps/trust'))).toMatchObject({ resource: 'configmaps', name: 'trust', verb: 'update' });
  });

  it('allows what a rule grants, in its namespace, for its names', () => {
    expect(rbacAllows(roles, request('GET', '/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes/s1'))).toBe(true);
    expect(rbacAllows(roles, request('GET', '/api/v1/namespaces/sbx/pods/p1/exec', { websocket: true }))).toBe(true);
    expect(rbacAllows(roles, request('PUT', '/api/v1/namespaces/sbx/configmaps/trust'))).toBe(true);
  });

  it.each([
    ['a verb no rule grants', request('DELETE', '/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes/s1')],
    ['another namespace', request('GET', '/apis/agents.x-k8s.io/v1beta1/namespaces/other/sandboxes/s1')],
    ['another resource', request('GET', '/api/v1/namespaces/sbx/secrets/s1')],
    ['another object than the rule names', request('PUT', '/api/v1/namespaces/sbx/configmaps/workspace-ref')],
    ['a watch where only list is granted', request('GET', '/apis/agents.x-k8s.io/v1beta1/namespaces/sbx/sandboxes', { watch: true })],
  ])('refuses %s (the check can fail)', (_what, denied) => {
    expect(rbacAllows(roles, denied)).toBe(false);
  });
});
