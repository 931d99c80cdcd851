import { describe, expect, it } from 'vitest';
import { signedHeaders } from '../../../functions/shared/aws-json-call.ts';
import { freshLocalCredentials } from '../../../local/local-credentials.ts';
import { sha256Hex, verifyHeaderSignature } from '../../../local/sigv4-verify.ts';

/** The SQS calls of the redrive are signed as the AWS SDK signs: the stand-ins' verifier (built as the SDK signs) accepts them. */
describe('a signed AWS JSON-protocol call', () => {
  const credentials = freshLocalCredentials();
  const now = new Date('2026-12-02T10:30:00Z');
  const request = (body: string, key = credentials) => {
    const headers = signedHeaders({
      endpoint: 'https://sqs.eu-west-1.amazonaws.com/',
      region: 'eu-west-1',
      service: 'sqs',
      credentials: { ...key, sessionToken: 'token-1' },
      target: 'AmazonSQS.ReceiveMessage',
      body,
      now,
    });
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    return { method: 'POST', url: '/', headers: { ...lower, host: 'sqs.eu-west-1.amazonaws.com' } as Record<string, string> };
  };
  const verify = (req: ReturnType<typeof request>, body: string) =>
    verifyHeaderSignature(req, sha256Hex(body), { credentials, service: 'sqs', escapePath: true, now: now.getTime() });

  it('signs host, content type, date, session token and target over the body', () => {
    const body = JSON.stringify({ QueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/q', MaxNumberOfMessages: 10 });
    const req = request(body);
    expect(req.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=S3RVER\/20261202\/eu-west-1\/sqs\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
    expect(req.headers['x-amz-date']).toBe('20261202T103000Z');
    expect(verify(req, body)).toEqual({ ok: true });
  });

  it('is refused for another body or another key', () => {
    const body = '{"QueueUrl":"q"}';
    expect(verify(request(body), '{"QueueUrl":"other"}')).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    expect(verify(request(body, { ...credentials, secretAccessKey: 'not-the-key' }), body)).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
  });
});
