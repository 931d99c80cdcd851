import type { Context } from 'aws-lambda';
import { handleGithubWorkEvent } from '../github/run-github-work.ts';
import { loadLambdaDeps } from './lambda-deps.ts';
import { once } from './once.ts';

const deps = once(() => loadLambdaDeps(process.env));

/**
 * Entry of the GitHub worker function: the webhook route invokes it asynchronously with one
 * accepted trigger, and it runs that trigger to a pull request or an explaining comment. It is
 * the only function that reads the GitHub App's private key.
 */
export const handler = async (event: unknown, context: Context) => {
  await handleGithubWorkEvent(await deps(), event, Date.now() + context.getRemainingTimeInMillis());
};
