import { z } from 'zod';
import { allowListSchema } from './network-allow-list.ts';
import { workspacePrefix, WORKSPACES_PREFIX } from './workspace-prefix.ts';

/**
 * The S3 mailbox through which a sandboxed command's HTTP requests leave the runner's VPC at no
 * idle cost (docs/security.md, "Git and registry traffic at $0 idle"): the runner writes a
 * request under its workspace's prefix (the only place its credentials and the VPC endpoint
 * reach), an S3 notification hands it to the egress forwarder outside the VPC, which checks it
 * against the workspace's grant and writes the response beside it. Both ends use these keys and
 * shapes; nothing else is shared.
 */
export const EGRESS_REQUEST_SUFFIX = '.egress-request.json';
export const EGRESS_RESPONSE_SUFFIX = '.egress-response';

/** Grants live outside `workspaces/`: the harness writes them, the runner can neither write nor read them. */
export const EGRESS_GRANTS_PREFIX = 'egress-grants/';

const REQUEST_ID = /^[A-Za-z0-9_-]{1,64}$/;
const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Where the runner's end of the mailbox writes a request (isolation/mailbox-client.ts). */
export function egressRequestKey(workspaceId: string, requestId: string): string {
  return `${workspacePrefix(workspaceId)}egress/${requestId}${EGRESS_REQUEST_SUFFIX}`;
}

export function egressResponseKey(workspaceId: string, requestId: string): string {
  return `${workspacePrefix(workspaceId)}egress/${requestId}${EGRESS_RESPONSE_SUFFIX}`;
}

export function egressGrantKey(workspaceId: string): string {
  return `${EGRESS_GRANTS_PREFIX}${workspaceId}.json`;
}

/** The workspace and request a request key names; undefined for any other key. */
export function parseEgressRequestKey(key: string): { workspaceId: string; requestId: string } | undefined {
  const match = /^([^/]+)\/([^/]+)\/egress\/([^/]+)$/.exec(key);
  if (!match || `${match[1]}/` !== WORKSPACES_PREFIX || !match[3]!.endsWith(EGRESS_REQUEST_SUFFIX)) return undefined;
  const workspaceId = match[2]!;
  const requestId = match[3]!.slice(0, -EGRESS_REQUEST_SUFFIX.length);
  return WORKSPACE_ID.test(workspaceId) && REQUEST_ID.test(requestId) ? { workspaceId, requestId } : undefined;
}

/** One HTTP request of a sandboxed command, as the runner's local proxy read it. */
export const egressRequestSchema = z.object({
  method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']),
  url: z.string().max(8_192),
  headers: z.record(z.string(), z.string()).default({}),
  /** Base64; requests to registries rarely have one. */
  body: z
    .string()
    .max(8 * 1024 * 1024)
    .optional(),
});
export type EgressRequest = z.output<typeof egressRequestSchema>;

/**
 * What the harness allows a workspace's commands to reach right now: the set-up list while set-up
 * steps run, the session's own `allowedDomains` during turns. Absent or expired: nothing.
 */
export const egressGrantSchema = z.object({
  allowedDomains: allowListSchema,
  phase: z.enum(['setup', 'agent']),
  /** Epoch milliseconds. */
  expiresAt: z.number().int(),
});
export type EgressGrant = z.output<typeof egressGrantSchema>;

export interface EgressResponseHead {
  status: number;
  headers: Record<string, string>;
}

/** A response object: one line of JSON (status, headers), then the body's bytes as they came. */
export function encodeEgressResponse(head: EgressResponseHead, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`, 'utf8'), body]);
}

/** How the runner's end reads an answer (isolation/mailbox-client.ts). */
export function decodeEgressResponse(bytes: Uint8Array): EgressResponseHead & { body: Buffer } {
  const buffer = Buffer.from(bytes);
  const end = buffer.indexOf(0x0a);
  if (end < 0) throw new Error('An egress response object has no head line.');
  const head = JSON.parse(buffer.subarray(0, end).toString('utf8')) as EgressResponseHead;
  return { ...head, body: buffer.subarray(end + 1) };
}
