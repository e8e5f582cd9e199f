import { normalizeHost } from '@berth/contracts';

export type Target = Readonly<{ host: string; port: number }>;

const PORT = /^[0-9]{1,5}$/;

function port(text: string): number | null {
  if (!PORT.test(text)) return null;
  const n = Number(text);
  return n >= 1 && n <= 65_535 ? n : null;
}

/** A CONNECT request's authority: `host:port` or `[v6]:port` (the port is required). */
export function parseAuthority(authority: string): Target | null {
  const bracketed = /^\[([^\]]+)\]:([^:]+)$/.exec(authority);
  if (bracketed) {
    const p = port(bracketed[2]);
    return p === null ? null : { host: normalizeHost(bracketed[1]), port: p };
  }
  const colon = authority.lastIndexOf(':');
  if (colon <= 0 || authority.indexOf(':') !== colon) return null;
  const p = port(authority.slice(colon + 1));
  return p === null ? null : { host: normalizeHost(authority.slice(0, colon)), port: p };
}

/** A request's destination: plain HTTP in absolute form, or a request inside a TLS tunnel the egress terminates (`https:`). */
export type AbsoluteTarget = Target & Readonly<{ protocol: 'http:' | 'https:'; pathAndQuery: string }>;

/**
 * An absolute-form request target (`GET http://host/path`, what clients send to an HTTP proxy for
 * plain `http:` URLs). Only `http:`: clients tunnel `https:` with CONNECT.
 */
export function parseAbsoluteTarget(target: string): AbsoluteTarget | null {
  if (!/^http:\/\//i.test(target)) return null;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  if (url.username !== '' || url.password !== '') return null;
  const p = url.port === '' ? 80 : port(url.port);
  return p === null ? null : { protocol: 'http:', host: normalizeHost(url.hostname), port: p, pathAndQuery: `${url.pathname}${url.search}` };
}

/**
 * An origin-form request (`/mcp?x=1`) inside a TLS tunnel the egress terminates for `tunnel` (the
 * CONNECT authority, already allowed): the destination is the tunnel's, whatever the request's
 * `Host` says, and the path has its dot segments resolved. Null for anything but an origin-form path.
 */
export function parseTunnelledTarget(tunnel: Target, originForm: string): AbsoluteTarget | null {
  if (!originForm.startsWith('/') || originForm.startsWith('//')) return null;
  let url: URL;
  try {
    url = new URL(originForm, 'https://tunnel.invalid');
  } catch {
    return null;
  }
  if (url.host !== 'tunnel.invalid') return null;
  return { protocol: 'https:', host: tunnel.host, port: tunnel.port, pathAndQuery: `${url.pathname}${url.search}` };
}
