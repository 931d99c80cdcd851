import type { LambdaClient } from '@aws-sdk/client-lambda';
import type { LazyClient } from '../shared/lazy-client.ts';
import type { RunnerRequest, RunnerResponse, StorageCredentials } from '../../sandbox-runner/protocol.ts';
import type { EnvironmentAccess } from '../../sandbox-runner/common/environment-policy.ts';
import { RunnerFailedError } from './runner-errors.ts';
import { isConnectionReset, isRetryableOnReset, RUNNER_RESET_RETRIES } from './runner-retry.ts';
import { runnerGitTenantId, runnerTenantId } from './runner-tenant.ts';
import { HARNESS_GIT_OPS } from '../../sandbox-runner/common/runner-ops-scope.ts';

/** The harness's view of the sandbox runner: one request, one response. */
export interface RunnerClient {
  invoke(request: RunnerRequest): Promise<RunnerResponse>;
}

/** Mints the short-lived, workspace-scoped storage credentials sent with each runner call. */
export interface WorkspaceCredentialSource {
  forWorkspace(workspaceId: string): Promise<StorageCredentials>;
  /**
   * For a cached environment layer (sandbox-runner/common/environment-policy.ts): `read` or
   * `write` one layer's key (runner calls), `delete` under one repository's folder (the API side).
   * A source without it serves no cached environments (the layer code says so when asked).
   */
  forEnvironment?(target: string, access: EnvironmentAccess): Promise<StorageCredentials>;
}

/** Pause before sending a retryable op again after a reset (doubled each time). */
const RETRY_PAUSE_MS = 50;

/**
 * Calls the runner through the Lambda Invoke API, locally and in AWS alike. Every call carries
 * the workspace's tenant id (the runner function is tenant-isolated: see runner-tenant.ts). An
 * op that is safe to repeat (runner-retry.ts) is sent again when the call failed on a reset
 * connection, on the way to the runner or inside it.
 *
 * The ops that carry a GitHub token (HARNESS_GIT_OPS) run under the workspace's git tenant id, in
 * environments where no command ever ran; with `gitFunctionName` (AWS: the git function outside
 * the runner's VPC, docs/security.md "Git and registry traffic at $0 idle") they go to that
 * function instead, so the sandbox runner never holds the token nor needs a network for git.
 */
export function createLambdaRunnerClient(lambda: LazyClient<LambdaClient>, functionName: string, gitFunctionName?: string): RunnerClient {
  async function invokeOnce(request: RunnerRequest, tenantId: string): Promise<RunnerResponse> {
    const { InvokeCommand } = await import('@aws-sdk/client-lambda');
    const target = gitFunctionName && HARNESS_GIT_OPS.has(request.op.type) ? gitFunctionName : functionName;
    const out = await (await lambda()).send(new InvokeCommand({ FunctionName: target, TenantId: tenantId, Payload: Buffer.from(JSON.stringify(request)) }));
    const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
    if (out.FunctionError) {
      let detail = text;
      try {
        const parsed = JSON.parse(text) as { errorType?: string; errorMessage?: string };
        detail = `${parsed.errorType ?? 'Error'}: ${parsed.errorMessage ?? ''}`;
      } catch {
        // keep raw text
      }
      throw new RunnerFailedError(`The sandbox runner failed: ${detail}`);
    }
    try {
      return JSON.parse(text) as RunnerResponse;
    } catch {
      throw new RunnerFailedError(`The sandbox runner returned an unreadable response (${text.length} bytes).`);
    }
  }

  return {
    async invoke(request) {
      const tenantId = HARNESS_GIT_OPS.has(request.op.type) ? runnerGitTenantId(request.workspace.id) : runnerTenantId(request.workspace.id);
      const retries = isRetryableOnReset(request.op) ? RUNNER_RESET_RETRIES : 0;
      for (let attempt = 0; ; attempt++) {
        try {
          return await invokeOnce(request, tenantId);
        } catch (err) {
          if (attempt >= retries || !isConnectionReset(err)) throw err;
          await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS * 2 ** attempt));
        }
      }
    },
  };
}
