import { variableTerminatesTls, withVariables, type VariableCredential } from './variable-credentials';

const variable = (credentialId: string, hosts: readonly string[] | null, header = true): VariableCredential => ({ credentialId, placeholder: `ph-${credentialId}`, secret: `secret-${credentialId}`, hosts, header });

describe('environment_variable credentials at the egress', () => {
  const api = variable('api', ['api.example.test', '*.svc.example.test']);
  const any = variable('any', null);
  const bodyOnly = variable('body', ['api.example.test'], false);

  it("replaces each placeholder of a covering header credential in every header value, every occurrence", () => {
    const out = withVariables({ authorization: 'Bearer ph-api', 'x-keys': ['ph-api,ph-api', 'ph-any'], accept: 'text/plain' }, [api, any], 'api.example.test');
    expect(out).toEqual({ authorization: 'Bearer secret-api', 'x-keys': ['secret-api,secret-api', 'secret-any'], accept: 'text/plain' });
    expect(withVariables({ 'x-k': 'ph-api' }, [api], 'a.svc.example.test')).toEqual({ 'x-k': 'secret-api' });
  });

  it('leaves the placeholder for a host the credential does not cover, and for a credential that injects into bodies only', () => {
    for (const host of ['other.test', 'api.example.test.evil.test', 'svc.example.test', 'example.test']) {
      expect([host, withVariables({ authorization: 'Bearer ph-api' }, [api], host)]).toEqual([host, { authorization: 'Bearer ph-api' }]);
    }
    expect(withVariables({ authorization: 'ph-body' }, [bodyOnly], 'api.example.test')).toEqual({ authorization: 'ph-body' });
    // An unrestricted credential applies wherever the environment let the request go.
    expect(withVariables({ authorization: 'ph-any' }, [any], 'anything.test')).toEqual({ authorization: 'secret-any' });
  });

  it('terminates TLS for the hosts a limited header credential names, on any port, and never for an unrestricted or body-only one', () => {
    expect(variableTerminatesTls([api], { host: 'api.example.test', port: 443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'api.example.test', port: 8443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'x.svc.example.test', port: 443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'other.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([any], { host: 'api.example.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([bodyOnly], { host: 'api.example.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([], { host: 'api.example.test', port: 443 })).toBe(false);
  });
});
