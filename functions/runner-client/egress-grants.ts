import type { S3Client } from '@aws-sdk/client-s3';
import { egressGrantKey, type EgressGrant } from '../../sandbox-runner/common/egress-mailbox.ts';
import type { RunnerRequest } from '../../sandbox-runner/protocol.ts';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { RunnerClient } from './runner-client.ts';

/** The ops that run sandboxed commands: the only ones whose network a grant governs. */
const COMMAND_OPS: ReadonlySet<string> = new Set(['bash', 'hook_command']);

/** How long a set-up grant outlives the set-up's own time limit, should deleting it fail. */
const SETUP_GRANT_MARGIN_MS = 60_000;

/** One hour, as the egress proxy's tokens: longer than any runner call, the life of a background task's usual requests. */
export const EGRESS_GRANT_TTL_MS = 60 * 60_000;

export interface EgressGrantDeps {
  /** The harness's own S3 client: grants live outside `workspaces/`, where no runner credentials reach. */
  s3: LazyClient<S3Client>;
  bucket: string;
  clock: () => number;
  /** @default EGRESS_GRANT_TTL_MS */
  ttlMs?: number;
}

/**
 * The grant writer of the `mailbox` egress mode (docs/security.md, "Set-up steps' registries"):
 * before a runner call that runs commands, the workspace's grant `egress-grants/{id}.json` says
 * what the egress forwarder may fetch for them, exactly the call's `network.allowedDomains`
 * (the set-up registries during set-up steps, the session's own list in turns). An empty list
 * deletes it (a DELETE costs nothing), so a session that allows nothing gets nothing, whatever an
 * earlier call granted. A set-up grant is deleted again when the set-up call ends: what the
 * set-up left running in the background then sees the agent's grant, never the registries.
 * Ops that run no command (reads, writes, git) pass through untouched.
 */
export function withEgressGrants(client: RunnerClient, deps: EgressGrantDeps): RunnerClient {
  return {
    async invoke(request) {
      if (!COMMAND_OPS.has(request.op.type)) return client.invoke(request);
      const allowedDomains = request.network?.allowedDomains ?? [];
      const phase = request.network?.phase ?? 'agent';
      if (allowedDomains.length === 0) {
        await deleteGrant(deps, request.workspace.id);
        return client.invoke(request);
      }
      const expiresAt = deps.clock() + (phase === 'setup' ? opTimeoutMs(request) + SETUP_GRANT_MARGIN_MS : (deps.ttlMs ?? EGRESS_GRANT_TTL_MS));
      await putGrant(deps, request.workspace.id, { allowedDomains: [...allowedDomains], phase, expiresAt });
      if (phase !== 'setup') return client.invoke(request);
      try {
        return await client.invoke(request);
      } finally {
        await deleteGrant(deps, request.workspace.id);
      }
    },
  };
}

/** The op's own time limit, else the longest a runner call lasts (Lambda's 15 minutes). */
function opTimeoutMs(request: RunnerRequest): number {
  const timeout = (request.op as { timeoutMs?: unknown }).timeoutMs;
  return typeof timeout === 'number' && timeout > 0 ? timeout : 15 * 60_000;
}

async function putGrant(deps: EgressGrantDeps, workspaceId: string, grant: EgressGrant): Promise<void> {
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  await (await deps.s3()).send(
    new PutObjectCommand({ Bucket: deps.bucket, Key: egressGrantKey(workspaceId), Body: JSON.stringify(grant), ContentType: 'application/json' }),
  );
}

async function deleteGrant(deps: EgressGrantDeps, workspaceId: string): Promise<void> {
  const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  await (await deps.s3()).send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: egressGrantKey(workspaceId) }));
}
