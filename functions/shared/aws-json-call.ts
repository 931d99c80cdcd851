import { createHash, createHmac } from 'node:crypto';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One call of an AWS JSON-protocol API: `target` is `{service prefix}.{operation}` (X-Amz-Target). */
export type AwsJsonCall = (target: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>;

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * Calls an AWS service's JSON protocol (`application/x-amz-json-1.0`) signed with Signature
 * Version 4, for a service whose SDK client the project does not carry (SQS: a few calls of the
 * redrive). An error answer throws with AWS's error type and message.
 */
export function createAwsJsonCall(opts: { endpoint: string; region: string; service: string; credentials: () => Promise<AwsCredentials> }): AwsJsonCall {
  return async (target, input) => {
    const body = JSON.stringify(input);
    const headers = signedHeaders({ ...opts, credentials: await opts.credentials(), target, body, now: new Date() });
    const res = await fetch(opts.endpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    const out = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    if (!res.ok)
      throw new Error(
        `${target}: ${String(out.__type ?? res.status)
          .split('#')
          .pop()}: ${String(out.message ?? out.Message ?? text).slice(0, 300)}`,
      );
    return out;
  };
}

/** The request's headers with its `Authorization` (AWS4-HMAC-SHA256 over host, content type, date, token and target). */
export function signedHeaders(req: {
  endpoint: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  target: string;
  body: string;
  now: Date;
}): Record<string, string> {
  const url = new URL(req.endpoint);
  const amzDate = req.now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const headers: Record<string, string> = {
    'content-type': 'application/x-amz-json-1.0',
    host: url.host,
    'x-amz-date': amzDate,
    ...(req.credentials.sessionToken ? { 'x-amz-security-token': req.credentials.sessionToken } : {}),
    'x-amz-target': req.target,
  };
  const names = Object.keys(headers).sort();
  const canonical = ['POST', url.pathname || '/', '', ...names.map((n) => `${n}:${headers[n]}`), '', names.join(';'), sha256(req.body)].join('\n');
  const scope = `${day}/${req.region}/${req.service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${req.credentials.secretAccessKey}`, day);
  for (const part of [req.region, req.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(toSign).digest('hex');
  const { host: _host, ...sent } = headers;
  return {
    ...sent,
    authorization: `AWS4-HMAC-SHA256 Credential=${req.credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(';')}, Signature=${signature}`,
  };
}
