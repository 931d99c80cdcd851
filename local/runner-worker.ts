import { createBwrapSandbox } from '../sandbox-runner/isolation/bwrap-sandbox.ts';
import { stackEndpoints } from '../sandbox-runner/isolation/stack-endpoints.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner } from '../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../sandbox-runner/s3-client.ts';
import { serveTenantWorker } from './tenant-worker.ts';

/** What the stack tells one tenant's runner process (tenant-worker-pool.ts `init`). */
export interface RunnerWorkerInit {
  /** This tenant's own folder: its warm workspace copy and sandbox runtime files. */
  rootDir: string;
  s3Endpoint: string;
  region: string;
  /** The URLs of the stack's own services (stand-ins, API, scripted model), which no sandboxed request may reach. */
  stackEndpoints: string[];
}

/**
 * The local runner as one tenant's process builds it: the same runner the container Lambda
 * runs, with hardened bubblewrap instead of the process sandbox. One workspace per process
 * (the tenant id is the workspace id), as in a Lambda execution environment.
 */
function createLocalRunner(init: RunnerWorkerInit): Runner {
  const endpoints = stackEndpoints(init.stackEndpoints);
  return createRunner({
    rootDir: init.rootDir,
    s3ForCredentials: createS3ClientFactory({ region: init.region, endpoint: init.s3Endpoint }),
    sandbox: createBwrapSandbox({ runtimeDir: init.rootDir, stackEndpoints: endpoints }),
    limits: DEFAULT_RUNNER_LIMITS,
    maxWarmWorkspaces: 1,
    // Self-hosted git servers on a private network often speak plain http.
    git: { allowHttp: true, stackEndpoints: endpoints },
  });
}

serveTenantWorker((payload) => createLocalRunner(payload as RunnerWorkerInit));
