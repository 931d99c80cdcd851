import { z } from 'zod';
import type { Octokit } from '@octokit/rest';

/**
 * What the API asks GitHub before it records a claim or a connection. The API function has no
 * App private key (only the GitHub worker reads it), so it sends these to the worker
 * (functions/deps/github-dispatch.ts), which answers them with the App's JWT or an installation
 * token; locally the same invoke reaches the in-process worker.
 */
export const githubLookupSchema = z.discriminatedUnion('type', [
  /** The App itself: its public page, where an installation starts. */
  z.object({ type: z.literal('app') }),
  /** One installation of this App (GET /app/installations/{id}). */
  z.object({ type: z.literal('installation'), installationId: z.number().int().positive() }),
  /**
   * A repository by name: with an App, searched in the repository lists of the given
   * installations (GET /installation/repositories, every page); with a plain token, GET /repos.
   */
  z.object({ type: z.literal('repository'), fullName: z.string().min(3).max(200), installationIds: z.array(z.number().int().positive()).max(100) }),
]);
export type GithubLookup = z.infer<typeof githubLookupSchema>;

export const githubLookupAnswerSchema = z.object({
  /** How this deployment authenticates to GitHub: a GitHub App, one plain token, or not at all. */
  mode: z.enum(['app', 'token', 'none']),
  app: z.object({ url: z.string() }).optional(),
  installation: z.object({ id: z.number().int(), account: z.string(), createdAt: z.string() }).nullable().optional(),
  repository: z.object({ id: z.number().int(), fullName: z.string(), installationId: z.number().int().optional() }).nullable().optional(),
});
export type GithubLookupAnswer = z.infer<typeof githubLookupAnswerSchema>;

export interface LoadedGithubAuth {
  Octokit: typeof Octokit;
  /** The App's authentication (JWTs, installation tokens), when an App is configured. */
  app?: ReturnType<typeof import('@octokit/auth-app').createAppAuth>;
  apiUrl: string;
  token?: string;
}

export async function answerGithubLookup(auth: LoadedGithubAuth, query: GithubLookup): Promise<GithubLookupAnswer> {
  const mode = auth.app ? 'app' : auth.token ? 'token' : 'none';
  if (mode === 'none') return { mode };
  if (query.type === 'repository') return { mode, repository: await findRepository(auth, query.fullName, query.installationIds) };
  if (!auth.app) return { mode };
  const appClient = new auth.Octokit({ baseUrl: auth.apiUrl, auth: (await auth.app({ type: 'app' })).token });
  if (query.type === 'app') return { mode, app: { url: (await appClient.rest.apps.getAuthenticated()).data?.html_url ?? '' } };
  try {
    const { data } = await appClient.rest.apps.getInstallation({ installation_id: query.installationId });
    const account = data.account && 'login' in data.account ? data.account.login : (data.account?.name ?? '');
    return { mode, installation: { id: data.id, account, createdAt: data.created_at } };
  } catch (err) {
    if (isNotFound(err)) return { mode, installation: null };
    throw err;
  }
}

/** The repository's id and current name, when the given installations (App) or the token can see it. */
async function findRepository(auth: LoadedGithubAuth, fullName: string, installationIds: number[]): Promise<GithubLookupAnswer['repository']> {
  const wanted = fullName.toLowerCase();
  if (!auth.app) {
    const [owner, repo] = fullName.split('/') as [string, string];
    try {
      const { data } = await new auth.Octokit({ baseUrl: auth.apiUrl, auth: auth.token }).rest.repos.get({ owner, repo });
      // GitHub redirects an old name to the repository's new one; only the name asked for counts.
      return data.full_name.toLowerCase() === wanted ? { id: data.id, fullName: data.full_name } : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }
  for (const installationId of installationIds) {
    let token: string;
    try {
      token = (await auth.app({ type: 'installation', installationId })).token;
    } catch (err) {
      // An installation that was uninstalled since it was claimed lists nothing.
      if (isNotFound(err)) continue;
      throw err;
    }
    const client = new auth.Octokit({ baseUrl: auth.apiUrl, auth: token });
    const repositories = await client.paginate(client.rest.apps.listReposAccessibleToInstallation, { per_page: 100 });
    const found = repositories.find((r) => r.full_name.toLowerCase() === wanted);
    if (found) return { id: found.id, fullName: found.full_name, installationId };
  }
  return null;
}

function isNotFound(err: unknown): boolean {
  return (err as { status?: number }).status === 404;
}
