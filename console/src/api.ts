import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../cli/generated/api.d.ts';
import { tokenStore } from './token.ts';
import { apiFetch } from '../../cli/api-fetch.ts';

export type Schemas = components['schemas'];
export type Session = Schemas['Session'];
export type TurnEvent = Schemas['TurnEvent'];
export type Message = Schemas['Message'];
export type PendingPermission = Schemas['PendingPermission'];

/** Called when the API refuses the token (401): the app goes back to sign-in. */
let onUnauthorized: () => void = () => undefined;
export const setUnauthorizedHandler = (fn: () => void) => (onUnauthorized = fn);

const auth: Middleware = {
  onRequest({ request }) {
    const token = tokenStore.get();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) onUnauthorized();
    return response;
  },
};

/** Every call sends its body's hash, as the CLI does (cli/api-fetch.ts: needed behind the CloudFront custom domain). */
export { apiFetch };

/** The typed client: paths and bodies come from the types generated from the OpenAPI document. */
export const api = createClient<paths, `application/${string}`>({ baseUrl: location.origin, fetch: (request) => apiFetch(request) });
api.use(auth);

/** The API's error message (its one error shape), or the HTTP status. */
export function errorText(error: unknown, response?: Response): string {
  const message = (error as { error?: { message?: string } } | undefined)?.error?.message;
  return message ?? (response ? `HTTP ${response.status}` : String(error));
}

/** The data of a call, or an Error carrying the API's message. */
export function must<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw new Error(errorText(result.error, result.response));
}

/** Headers of a raw fetch (streams, which openapi-fetch does not parse). */
export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${tokenStore.get() ?? ''}`, ...extra };
}
