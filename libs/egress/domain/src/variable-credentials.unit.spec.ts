import { bodyVariablesFor, variableTerminatesTls, withVariables, withVariablesInBody, type VariableCredential } from './variable-credentials';

const variable = (credentialId: string, hosts: readonly string[] | null, header = true, body = false): VariableCredential => ({ credentialId, placeholder: `ph-${credentialId}`, secret: `secret-${credentialId}`, hosts, header, body });

describe('environment_variable credentials at the egress', () => {
  const api = variable('api', ['api.example.test', '*.svc.example.test']);
  const any = variable('any', null);
  const bodyOnly = variable('body', ['api.example.test'], false, true);

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

  it('terminates TLS for the hosts a limited credential names, on any port, and never for an unrestricted one', () => {
    expect(variableTerminatesTls([api], { host: 'api.example.test', port: 443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'api.example.test', port: 8443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'x.svc.example.test', port: 443 })).toBe(true);
    expect(variableTerminatesTls([api], { host: 'other.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([any], { host: 'api.example.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([bodyOnly], { host: 'api.example.test', port: 443 })).toBe(true);
    expect(variableTerminatesTls([variable('none', ['api.example.test'], false, false)], { host: 'api.example.test', port: 443 })).toBe(false);
    expect(variableTerminatesTls([], { host: 'api.example.test', port: 443 })).toBe(false);
  });

  it('puts body credentials for the host into the body: every occurrence, any bytes around them, other credentials and hosts untouched', () => {
    const both = variable('both', ['api.example.test'], true, true);
    expect(bodyVariablesFor([api, bodyOnly, both, variable('elsewhere', ['other.test'], false, true)], 'api.example.test').map((c) => c.credentialId)).toEqual(['body', 'both']);
    expect(bodyVariablesFor([bodyOnly], 'other.test')).toEqual([]);
    const body = Buffer.concat([Buffer.from('{"k":"ph-body","again":"ph-body","h":"ph-api","x":"'), Buffer.from([0xff, 0x00]), Buffer.from('ph-both"}')]);
    const out = withVariablesInBody(body, [bodyOnly, both]);
    expect(out.toString('latin1')).toBe(Buffer.concat([Buffer.from('{"k":"secret-body","again":"secret-body","h":"ph-api","x":"'), Buffer.from([0xff, 0x00]), Buffer.from('secret-both"}')]).toString('latin1'));
    expect(withVariablesInBody(Buffer.from('nothing here'), [bodyOnly]).toString()).toBe('nothing here');
  });
});
