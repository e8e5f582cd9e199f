import { useEffect, useState } from 'react';

/** Hash routes, so a reload or a shared link lands on the same page whatever path serves the console. */
export type Route = { page: 'sessions' } | { page: 'session'; id: string } | { page: 'agents' } | { page: 'environments' } | { page: 'webhooks' } | { page: 'vaults' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'sessions' && parts[1]) return { page: 'session', id: decodeURIComponent(parts[1]) };
  if (parts[0] === 'agents') return { page: 'agents' };
  if (parts[0] === 'environments') return { page: 'environments' };
  if (parts[0] === 'webhooks') return { page: 'webhooks' };
  if (parts[0] === 'vaults') return { page: 'vaults' };
  return { page: 'sessions' };
}

export const hrefFor = (route: Route): string => (route.page === 'session' ? `#/sessions/${encodeURIComponent(route.id)}` : `#/${route.page}`);

export function navigate(route: Route): void {
  window.location.hash = hrefFor(route);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
