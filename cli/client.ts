import createClient from 'openapi-fetch';
import { cliFetch } from './http.ts';
import type { paths } from './generated/api.d.ts';
import type { ConfigStore } from './config-store.ts';
import { CliError, EXIT } from './exit-codes.ts';

/** The typed API client (types generated from the server's OpenAPI document). */
export function apiFor(store: ConfigStore) {
  const { url, token } = store.credentials();
  const api = createClient<paths, `application/${string}`>({ baseUrl: url, headers: { authorization: `Bearer ${token}` }, fetch: cliFetch });
  return { api, url, token };
}

export type Api = ReturnType<typeof apiFor>;

/** The data of a successful call; anything else becomes a CliError with the API's message and a fitting exit code. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  if (result.response.ok) return undefined as T;
  throw apiError(result.response.status, result.error);
}

export function apiError(status: number, body: unknown): CliError {
  const message = (body as { error?: { message?: string } } | undefined)?.error?.message ?? `HTTP ${status}`;
  const code = status === 401 || status === 403 ? EXIT.unauthorized : status === 404 ? EXIT.notFound : status === 400 ? EXIT.usage : EXIT.failed;
  return new CliError(`${message} (HTTP ${status})`, code);
}
