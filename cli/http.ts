import { apiFetch } from './api-fetch.ts';
import { CliError, EXIT } from './exit-codes.ts';

/**
 * A request that never got an answer: the server is down, the name does not resolve, the
 * connection dropped. Its message names the URL and the system's reason (Node's `fetch` says
 * only "fetch failed" and keeps the reason in `cause`), e.g.
 * `Cannot reach http://127.0.0.1:19199/v1/sessions: connect ECONNREFUSED 127.0.0.1:19199`.
 */
export class UnreachableError extends CliError {
  constructor(url: string, err: unknown) {
    super(`Cannot reach ${url}: ${reasonOf(err)}`, EXIT.failed);
  }
}

/** `apiFetch` (the payload hash a CloudFront-fronted stack needs) whose network failures say what failed. */
export async function cliFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  try {
    return await apiFetch(input, init);
  } catch (err) {
    throw unreachable(input, err);
  }
}

/** Plain `fetch`, for the presigned S3 upload (it goes to S3, not the API), with the same errors. */
export async function plainFetch(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    throw unreachable(url, err);
  }
}

function unreachable(input: string | URL | Request, err: unknown): unknown {
  // An abort is the caller's own doing, not the network's.
  if (!(err instanceof TypeError)) return err;
  return new UnreachableError(input instanceof Request ? input.url : String(input), err);
}

/** The innermost reasons of a failed fetch: `cause` chains, and every attempt of an AggregateError (IPv6 and IPv4 of one name). */
export function reasonOf(err: unknown): string {
  const reasons: string[] = [];
  const visit = (e: unknown, depth: number) => {
    if (!(e instanceof Error) || depth > 5) return;
    if (e instanceof AggregateError && e.errors.length > 0) {
      for (const inner of e.errors) visit(inner, depth + 1);
      return;
    }
    if (e.cause !== undefined) return visit(e.cause, depth + 1);
    const code = (e as { code?: unknown }).code;
    reasons.push(e.message || (typeof code === 'string' ? code : e.name));
  };
  visit(err, 0);
  const unique = [...new Set(reasons.filter(Boolean))];
  return unique.length > 0 ? unique.join('; ') : String(err);
}
