/** One API request as the stand-in saw it. */
export type RecordedApiRequest = Readonly<{ method: string; path: string; watch: boolean; websocket: boolean; token: string | null }>;

export type RbacRule = Readonly<{ apiGroups: readonly string[]; resources: readonly string[]; verbs: readonly string[]; resourceNames?: readonly string[] }>;
/** A Role's rules, in the namespace the Role is in. */
export type NamespacedRules = Readonly<{ namespace: string; rules: readonly RbacRule[] }>;

export type RequestAttributes = Readonly<{ namespace: string; apiGroup: string; resource: string; name: string | null; verb: string }>;

/**
 * The attributes the API server's authorizer sees for a request (the subset Berth's calls use):
 * namespace, API group, resource (with its subresource, `pods/exec`), object name and verb
 * (`GET` of a collection is `list`, or `watch` with `?watch=true`; an exec websocket is `create`,
 * which Kubernetes 1.31+ requires for it).
 */
export function requestAttributes(request: RecordedApiRequest): RequestAttributes {
  const match = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/namespaces\/([^/]+)\/([^/]+)(?:\/([^/]+)(?:\/([^/]+))?)?$/.exec(request.path);
  if (match === null) throw new Error(`not a namespaced resource path: ${request.path}`);
  const [, group = '', namespace = '', resource = '', name, sub] = match;
  const collectionVerb = request.watch ? 'watch' : 'list';
  const verbs: Record<string, string> = { GET: name === undefined ? collectionVerb : 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };
  const verb = request.websocket ? 'create' : (verbs[request.method] ?? request.method.toLowerCase());
  return { namespace, apiGroup: group, resource: sub === undefined ? resource : `${resource}/${sub}`, name: name ?? null, verb };
}

/** Whether any rule of the roles allows the request (RBAC is allow-only: no rule, no access). */
export function rbacAllows(roles: readonly NamespacedRules[], request: RecordedApiRequest): boolean {
  const a = requestAttributes(request);
  return roles.some(
    (role) =>
      role.namespace === a.namespace &&
      role.rules.some(
        (rule) =>
          rule.apiGroups.includes(a.apiGroup) &&
          rule.resources.includes(a.resource) &&
          rule.verbs.includes(a.verb) &&
          (rule.resourceNames === undefined || (a.name !== null && rule.resourceNames.includes(a.name))),
      ),
  );
}
