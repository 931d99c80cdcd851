import { SystemError } from '../shared/errors.ts';

/**
 * Lambda's own rule for a tenant id (the Invoke API's `X-Amz-Tenant-Id`): 1–256 characters of
 * letters, digits, space and `._:/=+-@`. Checked here so a bad id fails in the harness with a
 * clear message instead of as an InvalidParameterValueException from Lambda.
 */
const LAMBDA_TENANT_ID = /^[a-zA-Z0-9._:/=+\-@ ]{1,256}$/;

/**
 * The tenant id a runner call is made under: the workspace id. The runner function runs in
 * Lambda's per-tenant isolation mode, so an execution environment only ever serves invocations
 * of one tenant id. Keying it by workspace (not by API tenant) means an environment never holds
 * two workspaces: a `setsid` or background process left by one session can never see another
 * session's files, even another session of the same API tenant. Every runner call goes through
 * here (docs/security.md, "Per-workspace runner environments").
 */
export function runnerTenantId(workspaceId: string): string {
  if (!LAMBDA_TENANT_ID.test(workspaceId)) {
    throw new SystemError(`Workspace id "${workspaceId.slice(0, 300)}" is not a valid Lambda tenant id (1–256 of [a-zA-Z0-9._:/=+-@ ]).`, 'bad_workspace_id');
  }
  return workspaceId;
}

/**
 * The tenant id of the harness's own git operations on a workspace (a GitHub run's checkout and
 * push, which carry a token). They never share an execution environment with the workspace's
 * commands: in AWS a command can read its environment's processes (docs/security.md, "In AWS:
 * the runner Lambda"), and a process it left running would otherwise be there when the token
 * passes through.
 */
export function runnerGitTenantId(workspaceId: string): string {
  return runnerTenantId(`${runnerTenantId(workspaceId)}:git`);
}
