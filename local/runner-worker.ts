import { createBwrapSandbox } from '../sandbox-runner/isolation/bwrap-sandbox.ts';
import { stackEndpoints } from '../sandbox-runner/isolation/stack-endpoints.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS, type Runner } from '../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../sandbox-runner/s3-client.ts';
import { serveTenantWorker } from './tenant-worker.ts';
import { createAwsCallLog, runAsFunction } from './aws-call-log.ts';
import type { StorageCredentials } from '../sandbox-runner/protocol.ts';

/** What the stack tells one tenant's runner process (tenant-worker-pool.ts `init`). */
export interface RunnerWorkerInit {
  /** This tenant's own folder: its warm workspace copy and sandbox runtime files. */
  rootDir: string;
  s3Endpoint: string;
  region: string;
  /** The URLs of the stack's own services (stand-ins, API, scripted model), which no sandboxed request may reach. */
  stackEndpoints: string[];
  /** `mailbox`: commands' allowed requests go through the workspace's S3 mailbox, as in AWS (sandbox-runner/isolation/mailbox-proxy.ts). @default direct */
  egress?: 'mailbox';
  /** Record this process's AWS calls in this folder, as this function's (local/aws-call-log.ts). */
  awsCallLog?: { dir: string; functionName: string };
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
    s3ForCredentials: s3Clients(init),
    sandbox: createBwrapSandbox({ runtimeDir: init.rootDir, stackEndpoints: endpoints, egress: { kind: init.egress ?? 'direct' } }),
    limits: DEFAULT_RUNNER_LIMITS,
    maxWarmWorkspaces: 1,
    // Self-hosted git servers on a private network often speak plain http.
    git: { allowHttp: true, stackEndpoints: endpoints },
  });
}

/** The runner's S3 clients, each recording its calls when the stack keeps a call log (once per client: they are cached). */
function s3Clients(init: RunnerWorkerInit): ReturnType<typeof createS3ClientFactory> {
  const factory = createS3ClientFactory({ region: init.region, endpoint: init.s3Endpoint });
  if (!init.awsCallLog) return factory;
  const log = createAwsCallLog(init.awsCallLog.dir);
  const observed = new WeakSet<object>();
  return (credentials: StorageCredentials) => {
    const client = factory(credentials);
    if (!observed.has(client)) observed.add(client), log.observe(client);
    return client;
  };
}

serveTenantWorker((payload) => {
  const init = payload as RunnerWorkerInit;
  const runner = createLocalRunner(init);
  const functionName = init.awsCallLog?.functionName;
  return functionName ? (event) => runAsFunction(functionName, () => runner(event)) : runner;
});
