import type { STSClient } from '@aws-sdk/client-sts';
import type { StorageCredentials } from '../../sandbox-runner/protocol.ts';
import { createHash } from 'node:crypto';
import { workspaceSessionPolicy } from '../../sandbox-runner/common/session-policy.ts';
import { environmentSessionPolicy, type EnvironmentAccess } from '../../sandbox-runner/common/environment-policy.ts';
import { ENVIRONMENTS_PREFIX } from '../../sandbox-runner/common/environment-layer-key.ts';
import { SystemError } from '../shared/errors.ts';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { WorkspaceCredentialSource } from './runner-client.ts';

/**
 * The same shape the runner protocol accepts. Checked again here because the id is pasted into
 * an IAM policy: a `*` or `?` would widen the grant to other workspaces.
 */
const WORKSPACE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** STS refuses durations under 15 minutes. */
const MIN_DURATION_SECONDS = 900;

/** Credentials are reused for a workspace only while at least this much of their life remains. */
const REUSE_MARGIN_MS = 5 * 60_000;

/**
 * The inline session policy sent with AssumeRole: the runner's own definition of what one
 * workspace needs (sandbox-runner/common/session-policy.ts). The effective permissions are
 * the intersection of it and the workspace-access role's policy, so the credentials reach one
 * workspace's objects and nothing else, whatever the role allows.
 */
export function sessionPolicyFor(bucket: string, workspaceId: string, partition = 'aws') {
  assertWorkspaceId(workspaceId);
  return workspaceSessionPolicy({ bucket, workspaceId, partition });
}

/** The session policy for one cached environment layer's key (or one repository's folder of them), refused outside `environments/`. */
export function environmentPolicyFor(bucket: string, target: string, access: EnvironmentAccess, partition?: string) {
  if (!target.startsWith(ENVIRONMENTS_PREFIX))
    throw new SystemError(`Refusing to mint environment credentials outside ${ENVIRONMENTS_PREFIX}: "${target.slice(0, 200)}".`, 'bad_environment_key');
  return environmentSessionPolicy({ bucket, target, access, ...(partition ? { partition } : {}) });
}

export function assertWorkspaceId(workspaceId: string): void {
  if (!WORKSPACE_ID.test(workspaceId)) {
    throw new SystemError(`Refusing to mint credentials for workspace id "${workspaceId}": expected [A-Za-z0-9_-]{1,128}.`, 'bad_workspace_id');
  }
}

export interface StsWorkspaceCredentialOptions {
  sts: LazyClient<STSClient>;
  /** The dedicated workspace-access role (its own policy: the bucket's `workspaces/*`). */
  roleArn: string;
  bucket: string;
  partition?: string;
  /** @default 900 (the STS minimum) */
  durationSeconds?: number;
  clock?: () => number;
}

/**
 * Mints short-lived credentials for one workspace by assuming the workspace-access role with
 * a session policy narrowed to that workspace's prefix. The runner receives these with each
 * invocation; its own role has no S3 access. Credentials are cached per workspace while
 * comfortably valid, which saves an STS round trip on every tool call of a turn.
 */
export function createStsWorkspaceCredentialSource(opts: StsWorkspaceCredentialOptions): WorkspaceCredentialSource {
  const durationSeconds = Math.max(MIN_DURATION_SECONDS, opts.durationSeconds ?? MIN_DURATION_SECONDS);
  const clock = opts.clock ?? Date.now;
  const cache = new Map<string, { credentials: StorageCredentials; expiresAt: number }>();

  /** AssumeRole with `policy`, or the credentials of an earlier call with the same cache key while they stay valid. */
  async function assume(cacheKey: string, sessionName: string, policy: unknown): Promise<StorageCredentials> {
    const cached = cache.get(cacheKey);
    if (cached && cached.expiresAt - clock() > REUSE_MARGIN_MS) return cached.credentials;
    const credentials = await assumeRoleWithPolicy(opts.sts, { roleArn: opts.roleArn, sessionName, durationSeconds, policy });
    if (cache.size >= 256) cache.clear();
    cache.set(cacheKey, { credentials, expiresAt: Date.parse(credentials.expiration!) });
    return credentials;
  }

  return {
    async forWorkspace(workspaceId) {
      return assume(`ws/${workspaceId}`, `ws-${workspaceId}`, sessionPolicyFor(opts.bucket, workspaceId, opts.partition));
    },
    async forEnvironment(target, access) {
      const policy = environmentPolicyFor(opts.bucket, target, access, opts.partition);
      return assume(`env-${access}/${target}`, `env-${access}-${createHash('sha256').update(target).digest('hex').slice(0, 40)}`, policy);
    },
  };
}

/** One STS AssumeRole with an inline session policy: the effective permissions are the intersection of the role's and the policy's. */
export async function assumeRoleWithPolicy(
  sts: LazyClient<STSClient>,
  opts: { roleArn: string; sessionName: string; durationSeconds?: number; policy: unknown },
): Promise<StorageCredentials> {
  const { AssumeRoleCommand } = await import('@aws-sdk/client-sts');
  const out = await (await sts()).send(
    new AssumeRoleCommand({
      RoleArn: opts.roleArn,
      RoleSessionName: opts.sessionName.slice(0, 64),
      DurationSeconds: opts.durationSeconds ?? MIN_DURATION_SECONDS,
      Policy: JSON.stringify(opts.policy),
    }),
  );
  const c = out.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
    throw new SystemError(`STS AssumeRole returned no credentials for ${opts.roleArn}.`, 'credentials_unavailable');
  }
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration.toISOString() };
}
