import { useEffect, useState } from 'preact/hooks';

/** The console's pages, addressed by the URL's hash so /console serves one file for all of them. */
export type Route = { page: 'sessions' } | { page: 'session'; id: string } | { page: 'approvals' } | { page: 'schedules' } | { page: 'github' };

export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'sessions' && parts[1]) return { page: 'session', id: parts[1] };
  if (parts[0] === 'approvals') return { page: 'approvals' };
  if (parts[0] === 'schedules') return { page: 'schedules' };
  if (parts[0] === 'github') return { page: 'github' };
  return { page: 'sessions' };
}

export const sessionHref = (id: string) => `#/sessions/${encodeURIComponent(id)}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
