import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createBwrapSandbox } from './isolation/bwrap-sandbox.ts';
import { egressModeFromEnv, type EgressMode } from './common/egress-mode.ts';
import { HARNESS_GIT_OPS, opOutsideScope, runnerOpsScopeFromEnv } from './common/runner-ops-scope.ts';
import { createProcessSandbox } from './isolation/process-sandbox.ts';
import type { Sandbox } from './isolation/sandbox.ts';
import { stackEndpoints, type StackEndpoints } from './isolation/stack-endpoints.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner } from './runner.ts';
import { createS3ClientFactory } from './s3-client.ts';

/**
 * The runner as the container-image Lambda builds it: everything from the environment, once per
 * container. STRATUS_RUNNER_ROOT (default /tmp/stratus) holds the single warm workspace;
 * STRATUS_SANDBOX is `bwrap`, `process` or `auto` (bwrap when user namespaces work, which they
 * do not inside Lambda); STRATUS_S3_ENDPOINT points at a local S3 server outside AWS;
 * STRATUS_EGRESS / STRATUS_EGRESS_PROXY say how network use leaves (common/egress-mode.ts);
 * STRATUS_RUNNER_OPS=git makes it the git function, which refuses every op but the harness's git
 * (common/runner-ops-scope.ts).
 * A local S3 server is one of the deployment's own services: no sandboxed request may reach it.
 * The function's own credentials are never used for workspaces: each request carries its own.
 */
export function createContainerRunner(env: NodeJS.ProcessEnv): Runner {
  const rootDir = env.STRATUS_RUNNER_ROOT || '/tmp/stratus';
  const egress = egressModeFromEnv(env.STRATUS_EGRESS, env.STRATUS_EGRESS_PROXY);
  const s3Endpoint = env.STRATUS_S3_ENDPOINT || undefined;
  // Lambda's runtime API listens on the function's loopback: neither a command nor git may reach it.
  const runtimeApi = env.AWS_LAMBDA_RUNTIME_API ? [`http://${env.AWS_LAMBDA_RUNTIME_API}`] : [];
  const endpoints = stackEndpoints([...(s3Endpoint ? [s3Endpoint] : []), ...runtimeApi]);
  const scope = runnerOpsScopeFromEnv(env.STRATUS_RUNNER_OPS);
  const runner = createRunner({
    rootDir,
    s3ForCredentials: createS3ClientFactory({ region: env.AWS_REGION || 'us-east-1', endpoint: s3Endpoint }),
    sandbox: chooseSandbox(env.STRATUS_SANDBOX || 'auto', rootDir, env.STRATUS_WORKSPACE_LINK || path.join(rootDir, 'current'), egress, endpoints),
    limits: DEFAULT_RUNNER_LIMITS,
    maxWarmWorkspaces: 1,
    git: { egress, stackEndpoints: endpoints },
  });
  return scope === 'all' ? runner : onlyHarnessGit(runner);
}

/** The git function's runner: any op but the harness's git is refused before the runner sees it. */
export function onlyHarnessGit(runner: Runner): Runner {
  return async (event) => {
    const opType = (event as { op?: { type?: unknown } } | null)?.op?.type;
    if (typeof opType !== 'string' || !HARNESS_GIT_OPS.has(opType)) {
      return { ok: false, error: { kind: 'bad_request', message: opOutsideScope(String(opType)) } };
    }
    return runner(event);
  };
}

function chooseSandbox(kind: string, rootDir: string, linkPath: string, egress: EgressMode, endpoints: StackEndpoints): Sandbox {
  if (kind === 'bwrap' || (kind === 'auto' && bwrapWorks())) return createBwrapSandbox({ runtimeDir: rootDir, stackEndpoints: endpoints, egress });
  if (kind === 'process' || kind === 'auto') return createProcessSandbox({ linkPath, maxProcesses: 512, egress });
  throw new Error(`STRATUS_SANDBOX must be bwrap, process or auto, not "${kind}".`);
}

function bwrapWorks(): boolean {
  try {
    execFileSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '/bin/true'], {
      stdio: 'ignore',
      timeout: 5_000,
    });
    return true;
  } catch {
    return false;
  }
}
