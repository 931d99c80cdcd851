import type { Deps } from '../deps/deps.ts';
import { githubLookupEventSchema } from '../deps/github-dispatch.ts';
import type { GithubLookupAnswer } from '../github-api/github-lookup.ts';
import { handleGithubWorkEvent, type GithubWorkDeps } from './run-github-work.ts';

/**
 * What the GitHub worker function receives: a lookup the API asks synchronously (the worker
 * holds the App's private key, the API does not), or an accepted trigger to run.
 */
export async function handleGithubWorkerEvent(
  deps: GithubWorkDeps & Pick<Deps, 'githubClients'>,
  event: unknown,
  deadlineAt?: number,
): Promise<GithubLookupAnswer | undefined> {
  const lookup = githubLookupEventSchema.safeParse(event);
  if (lookup.success) return deps.githubClients.lookup(lookup.data.query);
  await handleGithubWorkEvent(deps, event, deadlineAt);
  return undefined;
}
