import type { Context } from 'aws-lambda';
import { handleGithubWorkerEvent } from '../github/github-worker-event.ts';
import { loadLambdaDeps } from './lambda-deps.ts';
import { once } from './once.ts';
import { settledInvocation } from './invocation-end.ts';

const deps = once(() => loadLambdaDeps(process.env));

/**
 * Entry of the GitHub worker function: the webhook route invokes it asynchronously with one
 * accepted trigger, and it runs that trigger to a pull request or an explaining comment; the
 * API invokes it synchronously with a lookup (an installation, a repository list) before it
 * records a claim or a connection. It is the only function that reads the GitHub App's private key.
 */
export const handler = async (event: unknown, context: Context) => {
  const ready = await deps();
  return settledInvocation(ready, () => handleGithubWorkerEvent(ready, event, Date.now() + context.getRemainingTimeInMillis()));
};
