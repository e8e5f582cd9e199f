import { hostMatches } from './hosts';
import type { HeaderMap } from './model-route';
import type { Target } from './targets';

/**
 * An `environment_variable` credential of the session, opened by the egress: the sandbox's variable
 * holds `placeholder` (`credentialPlaceholder`), and the egress puts `secret` in its place in the
 * header values of requests to the credential's hosts.
 */
export type VariableCredential = Readonly<{
  credentialId: string;
  placeholder: string;
  secret: string;
  /** `allowed_hosts` of a `limited` credential (names, `*.` wildcards, addresses); null for `unrestricted`: any host the environment lets the sandbox reach. */
  hosts: readonly string[] | null;
  /** `injection_location.header`. */
  header: boolean;
}>;

const covers = (credential: VariableCredential, host: string): boolean => credential.hosts === null || credential.hosts.some((pattern) => hostMatches(pattern, host));

/**
 * Whether the egress terminates TLS for a CONNECT to `target` to put a variable credential in:
 * a header credential whose `allowed_hosts` name the host (any port). An `unrestricted` credential
 * never makes the egress open a tunnel (it would have to open every one): over HTTPS it applies
 * only where another credential had the tunnel terminated anyway.
 */
export function variableTerminatesTls(variables: readonly VariableCredential[], target: Target): boolean {
  return variables.some((credential) => credential.header && credential.hosts !== null && covers(credential, target.host));
}

/**
 * The headers with every placeholder of a header credential covering `host` replaced by its
 * secret (every occurrence, in every value); other headers and credentials leave them as they are.
 */
export function withVariables(headers: HeaderMap, variables: readonly VariableCredential[], host: string): Record<string, string | string[]> {
  const applying = variables.filter((credential) => credential.header && covers(credential, host));
  const substitute = (value: string): string => applying.reduce((text, credential) => text.split(credential.placeholder).join(credential.secret), value);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? substitute(value) : value.map(substitute);
  }
  return out;
}
