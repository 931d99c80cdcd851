import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../cli/generated/api.d.ts';
import { tokenStore } from './token.ts';

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

/**
 * `fetch` with a body's SHA-256 in `x-amz-content-sha256`: a stack with a custom domain puts
 * CloudFront with origin access control in front of the API, and Lambda refuses a signed POST
 * or PUT whose viewer did not send the payload hash. Other deployments ignore the header.
 * (`crypto.subtle` exists on https and localhost pages, which is where the console runs.)
 */
export async function apiFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  if (input instanceof Request) {
    if (input.body === null || !crypto.subtle) return fetch(input);
    const body = await input.clone().arrayBuffer();
    const headers = new Headers(input.headers);
    headers.set('x-amz-content-sha256', await sha256Hex(body));
    return fetch(new Request(input, { headers, body }));
  }
  if (typeof init.body !== 'string' || !crypto.subtle) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set('x-amz-content-sha256', await sha256Hex(new TextEncoder().encode(init.body)));
  return fetch(input, { ...init, headers });
}

async function sha256Hex(body: ArrayBuffer | Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

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
