import { markOwnComments } from './own-comment-mark.ts';
import type { Octokit } from '@octokit/rest';
import { answerGithubLookup, type GithubLookup, type GithubLookupAnswer, type LoadedGithubAuth } from './github-lookup.ts';

/** What a run uses of GitHub: a REST client and the token git authenticates with, both for one repository. */
export interface GithubRepoAccess {
  octokit: Octokit;
  /** Handed to the runner's git (never to the sandbox) and to no one else. */
  token: string;
}

export interface GithubClientFactory {
  /** Credentials for one repository: with an App, an installation token narrowed to it. */
  forRepository(owner: string, name: string, installationId?: number): Promise<GithubRepoAccess>;
  /** What GitHub says about the App, an installation or a repository (proof of control before a claim or a connection). */
  lookup(query: GithubLookup): Promise<GithubLookupAnswer>;
}

export interface GithubAuthConfig {
  apiUrl: string;
  appId?: string;
  privateKey?: string;
  token?: string;
}

/** Thrown when no GitHub credentials are configured: the run explains it instead of failing silently. */
export class GithubNotConfiguredError extends Error {
  override name = 'GithubNotConfiguredError';
}

/**
 * Authenticates to GitHub with a GitHub App (preferred: PRs opened with an installation token
 * trigger the repository's own CI, and each token is narrowed to the one repository a run works
 * on) or a plain token for small setups. JWTs, installation tokens and their caching are
 * @octokit/auth-app's; REST calls and pagination are @octokit/rest's.
 */
export function createGithubClientFactory(config: GithubAuthConfig): GithubClientFactory {
  const load = githubAuthLoader(config);
  return {
    lookup: async (query) => answerGithubLookup(await load(), query),
    async forRepository(owner, name, installationId) {
      const { Octokit, app } = await load();
      if (app) {
        let id = installationId;
        if (id === undefined) {
          const jwt = await app({ type: 'app' });
          const appClient = new Octokit({ baseUrl: config.apiUrl, auth: jwt.token });
          id = (await appClient.rest.apps.getRepoInstallation({ owner, repo: name })).data.id;
        }
        const { token } = await app({ type: 'installation', installationId: id, repositoryNames: [name] });
        return { token, octokit: markOwnComments(new Octokit({ baseUrl: config.apiUrl, auth: token })) };
      }
      if (config.token) return { token: config.token, octokit: markOwnComments(new Octokit({ baseUrl: config.apiUrl, auth: config.token })) };
      throw new GithubNotConfiguredError(NOT_CONFIGURED);
    },
  };
}

export const NOT_CONFIGURED =
  'No GitHub credentials are configured: set STRATUS_GITHUB_APP_ID and STRATUS_GITHUB_APP_PRIVATE_KEY (a GitHub App) or STRATUS_GITHUB_TOKEN.';

/**
 * Octokit is loaded on the first GitHub call (docs/deploy.md, "Cold start and bundle size"):
 * the API function builds this factory at every cold start and most never call GitHub.
 */
function githubAuthLoader(config: GithubAuthConfig): () => Promise<LoadedGithubAuth> {
  let loading: Promise<LoadedGithubAuth> | undefined;
  return () =>
    (loading ??= (async () => {
      const [{ Octokit }, { createAppAuth }] = await Promise.all([import('@octokit/rest'), import('@octokit/auth-app')]);
      const plain = new Octokit({ baseUrl: config.apiUrl });
      const app = config.appId && config.privateKey ? createAppAuth({ appId: config.appId, privateKey: config.privateKey, request: plain.request }) : undefined;
      return { Octokit, app, apiUrl: config.apiUrl, token: config.token };
    })());
}
