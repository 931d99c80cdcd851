import { createBwrapSandbox } from '../../sandbox-runner/isolation/bwrap-sandbox.ts';
import { createRunner, DEFAULT_RUNNER_LIMITS } from '../../sandbox-runner/runner.ts';
import { createS3ClientFactory } from '../../sandbox-runner/s3-client.ts';

const ROOT_DIR = '/tmp/stratus';

/**
 * Entry of the sandbox runner's container image. The runner's own role grants nothing on
 * workspaces: every request carries credentials scoped to its workspace. /tmp is the
 * function's ephemeral storage, where warm workspace copies live.
 * TODO(sandbox runner, issue 4): Lambda has no user namespaces, so bwrap cannot start there;
 * swap in the Lambda sandbox when sandbox-runner/isolation provides one.
 */
const runner = createRunner({
  rootDir: ROOT_DIR,
  s3ForCredentials: createS3ClientFactory({ region: process.env.AWS_REGION ?? 'us-east-1' }),
  sandbox: createBwrapSandbox({ runtimeDir: ROOT_DIR }),
  limits: DEFAULT_RUNNER_LIMITS,
});

export const handler = (event: unknown) => runner(event);
