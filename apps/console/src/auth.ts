/** The signed-in API key lives in sessionStorage: it goes away with the tab, never into localStorage. */
const KEY = 'berth.console.apiKey';
const BASE = 'berth.console.baseUrl';

export type Credentials = { apiKey: string; baseUrl: string };

export function loadCredentials(): Credentials | null {
  const apiKey = sessionStorage.getItem(KEY);
  return apiKey ? { apiKey, baseUrl: sessionStorage.getItem(BASE) ?? '' } : null;
}

export function saveCredentials(c: Credentials): void {
  sessionStorage.setItem(KEY, c.apiKey);
  sessionStorage.setItem(BASE, c.baseUrl);
}

export function clearCredentials(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(BASE);
}
