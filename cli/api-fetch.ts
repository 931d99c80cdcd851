/**
 * `fetch` with the body's SHA-256 in `x-amz-content-sha256`. A stack with a custom domain puts
 * CloudFront with origin access control in front of the Lambda Function URL, and Lambda refuses
 * a signed POST or PUT whose payload hash the viewer did not send (it accepts no unsigned
 * payloads). Every other deployment ignores the header, so the CLI and the web console
 * (console/src/api.ts) always send it. Web Crypto only, so both Node and browsers run this file
 * (`crypto.subtle` exists on https and localhost pages, where the console runs).
 */
export async function apiFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (input instanceof Request) {
    if (input.body === null || !crypto.subtle) return fetch(input);
    const body = new Uint8Array(await input.clone().arrayBuffer());
    const headers = new Headers(input.headers);
    headers.set('x-amz-content-sha256', await sha256Hex(body));
    return fetch(new Request(input, { headers, body }));
  }
  const body = typeof init.body === 'string' ? new TextEncoder().encode(init.body) : init.body instanceof Uint8Array ? init.body : undefined;
  if (!body || !crypto.subtle) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set('x-amz-content-sha256', await sha256Hex(body));
  return fetch(input, { ...init, headers });
}

async function sha256Hex(body: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
