import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack.ts';
import { apiClient } from './api-client.ts';
import { startGitHttpServer } from './git-http-server.ts';
import { startGithubApiServer, type GithubApiServer } from './github-api-server.ts';
import { unscripted } from './stack-fixture.ts';

type GithubSettings = NonNullable<LocalStackOptions['github']>;

export interface GithubAppStack {
  stack: LocalStack;
  gh: GithubApiServer;
  git: Awaited<ReturnType<typeof startGitHttpServer>>;
  /** The tenant `local`'s client. */
  api: ReturnType<typeof apiClient>;
  /** The admin's client (it claimed the installation for `local`). */
  admin: ReturnType<typeof apiClient>;
  /** Stops the stack and both stand-ins (the test's folders are its own to clean). */
  close(): Promise<void>;
}

/**
 * What every GitHub run test starts: a GitHub App stand-in (its key pair made here), a git
 * smart-HTTP remote serving the bare repositories under `gitRoot` to the App's tokens, a local
 * stack whose GitHub settings name both (the scripted model unscripted unless `stack.brain`
 * says otherwise), and the App installed on `owner` with that installation claimed by the
 * tenant `local`. Repositories, issues and permissions are each test's own.
 */
export async function startGithubAppStack(o: {
  dataDir: string;
  gitRoot: string;
  appId: string;
  webhookSecret: string;
  installationId: number;
  owner?: string;
  github?: Partial<GithubSettings>;
  stack?: Omit<Partial<LocalStackOptions>, 'dataDir' | 'github'>;
  /** With `stack.apiTokens`: the tenant's and the admin's tokens (default: the stack's own and its admin-token file). */
  tokens?: { tenant: string; admin: string };
}): Promise<GithubAppStack> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const gh = await startGithubApiServer({ appId: o.appId, appPublicKey: publicKey, installationId: o.installationId });
  const git = await startGitHttpServer({ projectRoot: o.gitRoot, token: (t) => gh.isValidToken(t) });
  const stack = await startLocalStack({
    dataDir: o.dataDir,
    brain: unscripted,
    ...o.stack,
    github: {
      webhookSecret: o.webhookSecret,
      appId: o.appId,
      privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      apiUrl: gh.url,
      commitAuthor: { name: 'Stratus Test', email: 'stratus@example.com' },
      ...o.github,
    },
  });
  const api = apiClient(stack.apiUrl, o.tokens?.tenant ?? stack.token);
  const admin = apiClient(stack.apiUrl, o.tokens?.admin ?? readFileSync(path.join(o.dataDir, 'admin-token'), 'utf8').trim());
  gh.addInstallation(o.installationId, o.owner ?? 'acme');
  expect((await admin.request('POST', '/v1/admin/github/installations', { installationId: o.installationId, tenantId: 'local' })).status).toBe(201);
  const close = async () => {
    await stack.stop();
    await git.close();
    await gh.close();
  };
  return { stack, gh, git, api, admin, close };
}
