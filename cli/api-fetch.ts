import { createHash } from 'node:crypto';

/**
 * `fetch` with the body's SHA-256 in `x-amz-content-sha256`. A stack with a custom domain puts
 * CloudFront with origin access control in front of the Lambda Function URL, and Lambda refuses
 * a signed POST or PUT whose payload hash the viewer did not send (it accepts no unsigned
 * payloads). Every other deployment ignores the header, so the CLI always sends it.
 */
export function apiFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (input instanceof Request) return withRequestHash(input);
  const body = init.body;
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set('x-amz-content-sha256', sha256Hex(body));
  return fetch(input, { ...init, headers });
}

/** openapi-fetch hands over a Request whose body is already serialised. */
async function withRequestHash(request: Request): Promise<Response> {
  if (request.body === null) return fetch(request);
  const body = new Uint8Array(await request.clone().arrayBuffer());
  const headers = new Headers(request.headers);
  headers.set('x-amz-content-sha256', sha256Hex(body));
  return fetch(new Request(request, { headers, body }));
}

function sha256Hex(body: string | Uint8Array): string {
  return createHash('sha256').update(body).digest('hex');
}
