/**
 * The API token lives in this tab's session storage and nowhere else: closing the tab signs out,
 * and nothing else about the user is stored in the browser.
 */
const KEY = 'stratus.token';

export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(KEY),
  set: (token: string): void => sessionStorage.setItem(KEY, token),
  clear: (): void => sessionStorage.removeItem(KEY),
};
