import type { S3Client } from '@aws-sdk/client-s3';
import type { z } from 'zod';
import {
  egressGrantKey,
  egressGrantSchema,
  egressRequestSchema,
  egressResponseKey,
  encodeEgressResponse,
  parseEgressRequestKey,
  type EgressGrant,
  type EgressRequest,
} from '../../sandbox-runner/common/egress-mailbox.ts';
import { checkHostPort, parseAllowList } from '../../sandbox-runner/common/network-allow-list.ts';
import { SHORT_LIVED_TAGGING } from '../../sandbox-runner/common/short-lived-tag.ts';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { OutboundFetch } from './outbound-fetch.ts';
import { OutboundRefusedError } from './outbound-policy.ts';

export interface EgressForwarderDeps {
  s3: LazyClient<S3Client>;
  bucket: string;
  /** Bound to the outbound policy: public addresses only, no redirects, a size limit (outbound-fetch.ts). */
  fetch: OutboundFetch;
  clock: () => number;
}

/** What the forwarder did with one request object, for its log line. */
export type EgressDecision =
  | { kind: 'ignored'; key: string }
  | { kind: 'forwarded'; workspaceId: string; host: string; status: number }
  | { kind: 'refused'; workspaceId: string; host?: string; status: number; reason: string };

/** Headers the forwarder sets itself or that only mean something on the hop they came on. */
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
]);

/**
 * The far end of the egress mailbox (sandbox-runner/common/egress-mailbox.ts), outside the
 * runner's VPC: reads one request a sandboxed command made, checks its host against the grant
 * the harness wrote for the workspace the key names (only that workspace's credentials can write
 * under its prefix), makes the request through the outbound fetch (public addresses only, the
 * checked address pinned, redirects returned, not followed), and writes the response beside the
 * request. Every refusal is a response too (403/400/502 with a sentence), so the command's client
 * gets an HTTP answer instead of waiting. Runs no code from the request: it only moves bytes.
 * Responses carry the short-lived tag (expired by the bucket's lifecycle rule after a day), as
 * the runner's request objects do.
 */
export async function forwardEgressRequest(deps: EgressForwarderDeps, key: string): Promise<EgressDecision> {
  const at = parseEgressRequestKey(key);
  if (!at) return { kind: 'ignored', key };
  const { workspaceId, requestId } = at;
  const answer = async (status: number, headers: Record<string, string>, body: Uint8Array) => {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await (await deps.s3()).send(
      new PutObjectCommand({
        Bucket: deps.bucket,
        Key: egressResponseKey(workspaceId, requestId),
        Body: encodeEgressResponse({ status, headers }, body),
        Tagging: SHORT_LIVED_TAGGING,
      }),
    );
  };
  const refuse = async (status: number, reason: string, host?: string): Promise<EgressDecision> => {
    await answer(status, { 'content-type': 'text/plain; charset=utf-8', 'x-stratus-egress': 'refused' }, Buffer.from(`${reason}\n`));
    return { kind: 'refused', workspaceId, ...(host ? { host } : {}), status, reason };
  };

  const grant = await readGrant(deps, workspaceId);
  if (!grant) return refuse(403, 'This workspace has no network grant now: its commands may not reach the network.');
  const request = await readRequest(deps, key);
  if (!request) return refuse(400, 'The egress request object is not a valid request.');
  const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return refuse(400, 'Only http:// and https:// URLs are forwarded.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const decision = checkHostPort(host, port, parseAllowList(grant.allowedDomains));
  if (!decision.allowed) return refuse(403, `${host}:${port} is not on this workspace's allow-list (${grant.phase}).`, host);
  try {
    const res = await deps.fetch(url, {
      method: request.method,
      headers: forwardedHeaders(request),
      ...(request.body ? { body: Buffer.from(request.body, 'base64') } : {}),
    });
    const body = new Uint8Array(await res.arrayBuffer());
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => {
      headers[name] = value;
    });
    await answer(res.status, headers, body);
    return { kind: 'forwarded', workspaceId, host, status: res.status };
  } catch (err) {
    if (err instanceof OutboundRefusedError) return refuse(403, err.message, host);
    return refuse(502, err instanceof Error ? err.message : String(err), host);
  }
}

function forwardedHeaders(request: EgressRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).filter(([name]) => !HOP_HEADERS.has(name.toLowerCase())));
}

/** The workspace's grant if it exists and has not expired. */
async function readGrant(deps: EgressForwarderDeps, workspaceId: string): Promise<EgressGrant | undefined> {
  const text = await readText(deps, egressGrantKey(workspaceId));
  const grant = text === undefined ? undefined : parseJson(egressGrantSchema, text);
  return grant && grant.expiresAt > deps.clock() ? grant : undefined;
}

async function readRequest(deps: EgressForwarderDeps, key: string): Promise<EgressRequest | undefined> {
  const text = await readText(deps, key);
  return text === undefined ? undefined : parseJson(egressRequestSchema, text);
}

function parseJson<T extends z.ZodType>(schema: T, text: string): z.output<T> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

async function readText(deps: EgressForwarderDeps, key: string): Promise<string | undefined> {
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  try {
    const out = await (await deps.s3()).send(new GetObjectCommand({ Bucket: deps.bucket, Key: key }));
    return await out.Body!.transformToString('utf8');
  } catch (err) {
    // Without ListBucket (the forwarder has none) S3 answers a missing key with AccessDenied: absent, so refused.
    const name = (err as { name?: string }).name;
    if (name === 'NoSuchKey' || name === 'AccessDenied') return undefined;
    throw err;
  }
}
