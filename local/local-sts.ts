import type { WorkspaceCredentialSource } from '../functions/runner-client/runner-client.ts';
import { purgeSessionPolicy, type PurgeCredentialSource } from '../functions/runner-client/purge-credentials.ts';
import type { StorageCredentials } from '../sandbox-runner/protocol.ts';
import { assertWorkspaceId, environmentPolicyFor, sessionPolicyFor } from '../functions/runner-client/sts-credentials.ts';
import type { LocalCredentials } from './local-credentials.ts';

/** A role session as the local stack mints it: the role's local name and the session policy sent with it. */
export interface LocalAssumedRole {
  role: string;
  sessionPolicy: unknown;
}

const TOKEN_PREFIX = 'stratus-local-sts.';

/** The session token of local minted credentials: it names the role and carries the session policy (the stand-ins do not read it). */
export function localSessionToken(session: LocalAssumedRole): string {
  return `${TOKEN_PREFIX}${Buffer.from(JSON.stringify(session)).toString('base64url')}`;
}

export function readLocalSessionToken(token: string | undefined): LocalAssumedRole | undefined {
  if (!token?.startsWith(TOKEN_PREFIX)) return undefined;
  return JSON.parse(Buffer.from(token.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8')) as LocalAssumedRole;
}

/** What the local stack mints credentials with: its key, and who hears of each AssumeRole (AWS sees one sts:AssumeRole call). */
export interface LocalMinter {
  credentials: LocalCredentials;
  bucket: string;
  /** The role's local name and ARN for a role named `stratus-<name>` (local/stack.ts names them). */
  role(name: string): { roleName: string; roleArn: string };
  onAssumeRole?: (roleArn: string) => void;
}

function mint(minter: LocalMinter, role: string, sessionPolicy: unknown): StorageCredentials {
  const { roleName, roleArn } = minter.role(role);
  minter.onAssumeRole?.(roleArn);
  return { ...minter.credentials, sessionToken: localSessionToken({ role: roleName, sessionPolicy }) };
}

/**
 * Workspace credentials minted locally the way functions/runner-client/sts-credentials.ts mints
 * them from STS in AWS: for the workspace-access role, with the same per-workspace session policy
 * (`sessionPolicyFor`). They sign with the stack's key; the session token names the role and
 * carries the policy, so the AWS call log can judge each call made with them as IAM would.
 */
export function createLocalWorkspaceCredentials(minter: LocalMinter): WorkspaceCredentialSource {
  return {
    async forWorkspace(workspaceId) {
      assertWorkspaceId(workspaceId);
      return mint(minter, 'workspace-access', sessionPolicyFor(minter.bucket, workspaceId, 'aws'));
    },
    async forEnvironment(target, access) {
      return mint(minter, 'workspace-access', environmentPolicyFor(minter.bucket, target, access));
    },
  };
}

/** Purge credentials minted the same way: the session-purge role with purgeSessionPolicy. */
export function createLocalPurgeCredentials(minter: LocalMinter): PurgeCredentialSource {
  return {
    forSession: async (session) => mint(minter, 'session-purge', purgeSessionPolicy({ bucket: minter.bucket, ...session })),
  };
}
