import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { decodeEgressResponse, egressRequestKey, egressResponseKey, type EgressRequest, type EgressResponseHead } from '../common/egress-mailbox.ts';
import { SHORT_LIVED_TAGGING } from '../common/short-lived-tag.ts';

/** Where a workspace's mailbox is: its own S3 client (the request's scoped credentials), bucket and id. */
export interface MailboxTarget {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly id: string;
}

export interface MailboxTiming {
  /** First pause between polls; each later pause is half as long again, up to maxPollMs. */
  firstPollMs: number;
  maxPollMs: number;
  /** How long to wait for the forwarder's answer before giving up (S3 notifications can take a minute). */
  timeoutMs: number;
}

export const DEFAULT_MAILBOX_TIMING: MailboxTiming = { firstPollMs: 20, maxPollMs: 250, timeoutMs: 120_000 };

export type MailboxAnswer = EgressResponseHead & { body: Buffer };

/** Thrown when no answer came in time; the proxy turns it into a 504 for the command. */
export class MailboxTimeoutError extends Error {
  override name = 'MailboxTimeoutError';
}

/**
 * The runner's end of the egress mailbox (common/egress-mailbox.ts): puts one request object
 * under the workspace's own prefix with the workspace's own credentials (tagged short-lived, as
 * the forwarder's answers are), then polls for the answer beside it. A missing answer reads as
 * 404, or as 403 where the credentials may not list the bucket; both mean "not yet".
 */
export async function exchangeThroughMailbox(
  target: MailboxTarget,
  request: EgressRequest,
  timing: MailboxTiming = DEFAULT_MAILBOX_TIMING,
  signal?: AbortSignal,
): Promise<MailboxAnswer> {
  const requestId = randomBytes(16).toString('base64url');
  await target.s3.send(
    new PutObjectCommand({
      Bucket: target.bucket,
      Key: egressRequestKey(target.id, requestId),
      Body: JSON.stringify(request),
      ContentType: 'application/json',
      Tagging: SHORT_LIVED_TAGGING,
    }),
    { abortSignal: signal },
  );
  const deadline = Date.now() + timing.timeoutMs;
  let pause = timing.firstPollMs;
  for (;;) {
    const answer = await readAnswer(target, egressResponseKey(target.id, requestId), signal);
    if (answer) return answer;
    if (Date.now() + pause > deadline) throw new MailboxTimeoutError(`The egress forwarder did not answer within ${Math.round(timing.timeoutMs / 1000)} s.`);
    await sleep(pause, signal);
    pause = Math.min(timing.maxPollMs, Math.ceil(pause * 1.5));
  }
}

/** A pause that ends early, with the signal's reason, when the command's proxy closes. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => (clearTimeout(timer), reject(signal!.reason));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function readAnswer(target: MailboxTarget, key: string, signal: AbortSignal | undefined): Promise<MailboxAnswer | undefined> {
  try {
    const out = await target.s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }), { abortSignal: signal });
    return decodeEgressResponse(await out.Body!.transformToByteArray());
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'AccessDenied' || name === 'NotFound') return undefined;
    throw err;
  }
}
