import type { IncomingMessage } from 'node:http';
import { accessDenied, checkScope, refuse, sameHex, signString, type SigningCredentials, type Verdict } from './sigv4-verify.ts';

/**
 * A browser POST upload (`POST /{bucket}`, multipart/form-data), as S3 checks it: the form's
 * `policy` must be signed with the local credentials (x-amz-signature over the base64 policy, with
 * the key of x-amz-credential's scope), unexpired, and every condition must hold: exact and
 * `starts-with` matches of fields, the bucket, and `content-length-range` of the file. Every
 * field but the policy, its signature, the file and `x-ignore-*` must be named by a condition.
 *
 * The fields come before the file (S3 requires it), so only that head of the body is read; it is
 * put back on the request for s3rver to store. The file's size is the request's Content-Length
 * less the head and the closing boundary.
 */
const MAX_FORM_HEAD_BYTES = 1024 * 1024;

export function isPostForm(req: IncomingMessage): boolean {
  const { pathname, search } = new URL(req.url ?? '/', 'http://local');
  return req.method === 'POST' && search === '' && /^\/[^/]+\/?$/.test(pathname) && boundaryOf(req) !== undefined;
}

export async function verifyPostForm(req: IncomingMessage, credentials: SigningCredentials, now: number): Promise<Verdict> {
  const boundary = boundaryOf(req)!;
  const length = Number(req.headers['content-length']);
  if (!Number.isInteger(length) || length < 0) return refuse(411, 'MissingContentLength', 'You must provide the Content-Length HTTP header.');
  const head = await readFormHead(req, boundary);
  if (!head)
    return refuse(
      400,
      'MalformedPOSTRequest',
      `The body of your POST request is not well-formed multipart/form-data with a "file" field after the others (fields at most ${MAX_FORM_HEAD_BYTES} bytes).`,
    );
  const fileSize = length - head.contentStart - Buffer.byteLength(`\r\n--${boundary}--\r\n`);
  const bucket = new URL(req.url ?? '/', 'http://local').pathname.split('/')[1]!;
  return checkPolicy(head.fields, { bucket, fileSize, credentials, now });
}

function boundaryOf(req: IncomingMessage): string | undefined {
  const type = String(req.headers['content-type'] ?? '');
  if (!/^multipart\/form-data\s*;/i.test(type)) return undefined;
  return /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type)?.slice(1).find(Boolean);
}

/**
 * Reads until the `file` part's content starts and puts what was read back on the request, in
 * the same tick as the last read (an ended stream would otherwise emit 'end' in between).
 * Resolves to the bytes read and the fields before the file, by lower-cased name.
 */
function readFormHead(req: IncomingMessage, boundary: string): Promise<FormHead | undefined> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    const finish = (result: FormHead | undefined) => {
      req.off('readable', onReadable);
      req.off('end', onEnd);
      req.off('error', onEnd);
      if (result) req.unshift(result.bytes);
      resolve(result);
    };
    const onReadable = () => {
      let chunk: Buffer | null;
      while ((chunk = req.read() as Buffer | null) !== null) {
        buffered = Buffer.concat([buffered, chunk]);
        const head = parseHead(buffered, boundary);
        if (head === 'bad' || buffered.length > MAX_FORM_HEAD_BYTES + 64 * 1024) return finish(undefined);
        if (head !== 'more') return finish(head.contentStart > MAX_FORM_HEAD_BYTES ? undefined : { bytes: buffered, ...head });
      }
    };
    const onEnd = () => finish(undefined);
    req.on('readable', onReadable);
    req.once('end', onEnd);
    req.once('error', onEnd);
  });
}

/** The fields before the file, by lower-cased name, and where the file's content starts. */
type ParsedHead = { fields: Map<string, string>; contentStart: number };
type FormHead = ParsedHead & { bytes: Buffer };
type Head = ParsedHead | 'more' | 'bad';

function parseHead(buffer: Buffer, boundary: string): Head {
  const opening = Buffer.from(`--${boundary}\r\n`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  if (buffer.length < opening.length) return 'more';
  if (!buffer.subarray(0, opening.length).equals(opening)) return 'bad';
  const fields = new Map<string, string>();
  let at = opening.length;
  for (;;) {
    const headersEnd = buffer.indexOf('\r\n\r\n', at);
    if (headersEnd < 0) return 'more';
    const name = /content-disposition:[^\r\n]*\bname="([^"]*)"/i.exec(buffer.subarray(at, headersEnd).toString('utf8'))?.[1];
    if (name === undefined) return 'bad';
    if (name.toLowerCase() === 'file') return { fields, contentStart: headersEnd + 4 };
    const valueEnd = buffer.indexOf(delimiter, headersEnd + 4);
    if (valueEnd < 0 || buffer.length < valueEnd + delimiter.length + 2) return 'more';
    fields.set(name.toLowerCase(), buffer.subarray(headersEnd + 4, valueEnd).toString('utf8'));
    if (buffer.subarray(valueEnd + delimiter.length, valueEnd + delimiter.length + 2).toString() !== '\r\n') return 'bad';
    at = valueEnd + delimiter.length + 2;
  }
}

interface PolicyContext {
  bucket: string;
  fileSize: number;
  credentials: SigningCredentials;
  now: number;
}

const invalid = (why: string) => accessDenied(`Invalid according to Policy: ${why}`);
/** Fields a policy need not name (S3's rule). */
const EXEMPT = (name: string) => ['policy', 'x-amz-signature', 'file'].includes(name) || name.startsWith('x-ignore-');

function checkPolicy(fields: Map<string, string>, ctx: PolicyContext): Verdict {
  const [policy, algorithm, credential, amzDate, signature] = ['policy', 'x-amz-algorithm', 'x-amz-credential', 'x-amz-date', 'x-amz-signature'].map((n) =>
    fields.get(n),
  );
  if (!policy || !credential || !amzDate || !signature)
    return accessDenied('A POST upload needs a signed policy: the fields policy, x-amz-algorithm, x-amz-credential, x-amz-date and x-amz-signature.');
  if (algorithm !== 'AWS4-HMAC-SHA256') return refuse(400, 'InvalidArgument', 'x-amz-algorithm must be AWS4-HMAC-SHA256.');
  const scope = checkScope(credential, amzDate, { credentials: ctx.credentials, service: 's3' });
  if (!scope.ok) return scope;
  if (!sameHex(signString(policy, scope.key), signature)) {
    return refuse(
      403,
      'SignatureDoesNotMatch',
      'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    );
  }
  let document: { expiration?: unknown; conditions?: unknown };
  try {
    document = JSON.parse(Buffer.from(policy, 'base64').toString('utf8'));
  } catch {
    return refuse(400, 'InvalidPolicyDocument', 'The policy is not base64-encoded JSON.');
  }
  const expiration = typeof document.expiration === 'string' ? Date.parse(document.expiration) : NaN;
  if (Number.isNaN(expiration)) return refuse(400, 'InvalidPolicyDocument', 'The policy needs an expiration.');
  if (ctx.now > expiration) return invalid('Policy expired.');
  if (!Array.isArray(document.conditions)) return refuse(400, 'InvalidPolicyDocument', 'The policy needs a conditions list.');
  const values = new Map(fields);
  values.set('bucket', ctx.bucket);
  const named = new Set<string>();
  for (const condition of document.conditions as unknown[]) {
    const failed = checkCondition(condition, values, ctx.fileSize, named);
    if (failed) return failed;
  }
  const extra = [...fields.keys()].filter((name) => !EXEMPT(name) && !named.has(name));
  return extra.length > 0 ? invalid(`Extra input fields: ${extra.join(', ')}`) : { ok: true };
}

/** One condition: `{field: value}`, `["eq"|"starts-with", "$field", value]` or `["content-length-range", min, max]`. */
function checkCondition(condition: unknown, values: Map<string, string>, fileSize: number, named: Set<string>): Verdict | undefined {
  const text = JSON.stringify(condition);
  const failed = invalid(`Policy Condition failed: ${text}`);
  if (Array.isArray(condition) && condition[0] === 'content-length-range') {
    const [, min, max] = condition as [string, number, number];
    return fileSize >= Number(min) && fileSize <= Number(max)
      ? undefined
      : invalid(`Your proposed upload ${fileSize < Number(min) ? 'is smaller than the minimum' : 'exceeds the maximum'} allowed size`);
  }
  let op: string;
  let field: string;
  let expected: string;
  if (Array.isArray(condition) && condition.length === 3 && typeof condition[1] === 'string' && condition[1].startsWith('$')) {
    [op, field, expected] = [String(condition[0]).toLowerCase(), condition[1].slice(1).toLowerCase(), String(condition[2])];
  } else if (condition && typeof condition === 'object' && !Array.isArray(condition) && Object.keys(condition).length === 1) {
    const [name, value] = Object.entries(condition)[0]!;
    [op, field, expected] = ['eq', name.toLowerCase(), String(value)];
  } else {
    return refuse(400, 'InvalidPolicyDocument', `The policy has a condition S3 does not know: ${text}`);
  }
  named.add(field);
  const actual = values.get(field) ?? '';
  if (op === 'eq') return actual === expected ? undefined : failed;
  if (op === 'starts-with') return actual.startsWith(expected) ? undefined : failed;
  return refuse(400, 'InvalidPolicyDocument', `The policy has a condition S3 does not know: ${text}`);
}
