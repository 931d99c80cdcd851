import type { WorkspaceCredentialSource } from '../functions/runner-client/runner-client.ts';
import { assertWorkspaceId, sessionPolicyFor } from '../functions/runner-client/sts-credentials.ts';
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

/**
 * Workspace credentials minted locally the way functions/runner-client/sts-credentials.ts mints
 * them from STS in AWS: for the workspace-access role, with the same per-workspace session policy
 * (`sessionPolicyFor`). They sign with the stack's key; the session token names the role and
 * carries the policy, so the AWS call log can judge each call made with them as IAM would.
 * `onAssumeRole` hears the role ARN each time (AWS sees an sts:AssumeRole call).
 */
export function createLocalWorkspaceCredentials(opts: {
  credentials: LocalCredentials;
  bucket: string;
  roleName: string;
  roleArn: string;
  onAssumeRole?: (roleArn: string) => void;
}): WorkspaceCredentialSource {
  return {
    async forWorkspace(workspaceId, purpose = 'run') {
      assertWorkspaceId(workspaceId);
      opts.onAssumeRole?.(opts.roleArn);
      const sessionPolicy = sessionPolicyFor(opts.bucket, workspaceId, 'aws', purpose);
      return { ...opts.credentials, sessionToken: localSessionToken({ role: opts.roleName, sessionPolicy }) };
    },
  };
}
