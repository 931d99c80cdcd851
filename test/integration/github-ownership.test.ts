import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import { ADMIN_TENANT } from '../../functions/api/token-auth.ts';
import { handleGithubWorkEvent } from '../../functions/github/run-github-work.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
import { installationDeletedPayload, labeledPayload, makeBareRepo, sendDelivery, type RepoRef, finishedRun } from '../support/github-fixture.ts';
import { text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'ownership-webhook-secret';
const APP_ID = '5151';
const TOKENS = { 'token-victim': 'victim', 'token-squatter': 'squatter', 'token-admin': ADMIN_TENANT };

/** The GitHub stand-ins and a local stack for one describe block. */
function useGithubStack(opts: { app: boolean }) {
  const fx = {} as { stack: LocalStack; gh: GithubApiServer; git: Awaited<ReturnType<typeof startGitHttpServer>>; gitRoot: ReturnType<typeof makeTempDir> };
  const tmp = makeTempDir();
  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fx.gitRoot = makeTempDir();
    fx.gh = await startGithubApiServer(opts.app ? { appId: APP_ID, appPublicKey: publicKey } : { plainToken: 'ghp_plain-token' });
    fx.git = await startGitHttpServer({ projectRoot: fx.gitRoot.dir, token: (t) => fx.gh.isValidToken(t) });
    fx.stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      writeMetrics: () => undefined,
      apiTokens: TOKENS,
      github: {
        webhookSecret: SECRET,
        apiUrl: fx.gh.url,
        ...(opts.app ? { appId: APP_ID, privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() } : { token: 'ghp_plain-token' }),
      },
    });
  });
  afterAll(async () => {
    await fx.stack?.stop();
    await fx.git?.close();
    await fx.gh?.close();
    fx.gitRoot?.cleanup();
    tmp.cleanup();
  });
  return fx;
}

const runFor = (api: ReturnType<typeof apiClient>, deliveryId: string) => finishedRun(api, deliveryId);

describe('GitHub repository ownership with an App: connecting needs a claimed installation', () => {
  const fx = useGithubStack({ app: true });
  const victim = () => apiClient(fx.stack.apiUrl, 'token-victim');
  const squatter = () => apiClient(fx.stack.apiUrl, 'token-squatter');
  const admin = () => apiClient(fx.stack.apiUrl, 'token-admin');
  let repo: RepoRef;

  beforeAll(() => {
    makeBareRepo(fx.gitRoot.dir, 'victim-org/private-app', { 'README.md': 'private\n' });
    repo = { id: 9001, fullName: 'victim-org/private-app', cloneUrl: `${fx.git.url}/victim-org/private-app.git`, installationId: 501 };
    fx.gh.addRepository({ id: 9001, fullName: 'victim-org/private-app', installationId: 501 });
    fx.gh.addIssue('victim-org/private-app', 1, { title: 'Tidy the README', body: 'b', user: { login: 'owner', type: 'User' } });
  });

  /** Claims installation `id` for the API client's tenant through the App's setup flow, as GitHub's redirect would. */
  async function installThroughSetup(as: ReturnType<typeof apiClient>, id: number, account: string) {
    const link = await as.request('POST', '/v1/github/installations/setup-url');
    expect(link.status).toBe(200);
    expect(link.json.url).toBe(`${fx.gh.url}/apps/stratus-test/installations/new?state=${encodeURIComponent(link.json.state)}`);
    fx.gh.addInstallation(id, account);
    return fetch(`${fx.stack.apiUrl}/v1/github/installations/setup?installation_id=${id}&setup_action=install&state=${encodeURIComponent(link.json.state)}`);
  }

  let refusal: { status: number; json: unknown };

  it('a tenant that has not claimed the installation cannot connect the repository (the squat of issue #25)', async () => {
    const squat = await squatter().request('POST', '/v1/github/repositories', { repository: 'victim-org/private-app' });
    expect(squat.status).toBe(403);
    expect(squat.json.error.message).toContain('is not in the repository list of any GitHub App installation this tenant has claimed');
    refusal = { status: squat.status, json: squat.json };
    expect((await squatter().request('GET', '/v1/github/repositories')).json.repositories).toEqual([]);
  });

  it('the owner claims the installation through the setup link and connects; the squatter then gets the very same refusal', async () => {
    const claimed = await installThroughSetup(victim(), 501, 'victim-org');
    expect(claimed.status).toBe(201);
    expect(await claimed.json()).toMatchObject({ installationId: 501, tenantId: 'victim', account: 'victim-org', claimedBy: 'setup' });
    expect((await victim().request('GET', '/v1/github/installations')).json.installations).toMatchObject([{ installationId: 501 }]);
    const connected = await victim().request('POST', '/v1/github/repositories', { repository: 'Victim-Org/Private-App' });
    expect(connected.status).toBe(201);
    expect(connected.json).toMatchObject({ repository: 'victim-org/private-app', repositoryId: 9001, installationId: 501 });
    // Idempotent for its owner...
    expect((await victim().request('POST', '/v1/github/repositories', { repository: 'victim-org/private-app' })).json.error.code).toBe('repository_connected');
    // ...and no oracle for anyone else: the same 403, word for word, as before it was connected.
    const again = await squatter().request('POST', '/v1/github/repositories', { repository: 'victim-org/private-app' });
    expect({ status: again.status, json: again.json }).toEqual(refusal);
    expect((await squatter().request('GET', '/v1/github/repositories/victim-org/private-app')).status).toBe(404);
  });

  it("the squatter cannot claim the owner's installation: not with its own link, not an old one, not with a forged state, not on the admin routes", async () => {
    // Its own valid link, naming the owner's installation (GitHub does not sign installation_id).
    const stolen = await installThroughSetup(squatter(), 501, 'victim-org');
    expect(stolen.status).toBe(403);
    const message = ((await stolen.json()) as { error: { message: string } }).error.message;
    expect(message).toContain('Installation 501 cannot be claimed with this setup link');
    // An installation nobody claimed, made before the squatter's link: the same refusal.
    fx.gh.addInstallation(502, 'someone-else', new Date(Date.now() - 3_600_000).toISOString());
    const link = (await squatter().request('POST', '/v1/github/installations/setup-url')).json;
    const old = await fetch(`${fx.stack.apiUrl}/v1/github/installations/setup?installation_id=502&state=${encodeURIComponent(link.state)}`);
    expect(old.status).toBe(403);
    expect(((await old.json()) as { error: { message: string } }).error.message).toBe(message.replace('501', '502'));
    // A state altered to name the owner's tenant.
    const [v, payload, sig] = (link.state as string).split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), t: 'victim' })).toString('base64url');
    const forged = await fetch(`${fx.stack.apiUrl}/v1/github/installations/setup?installation_id=502&state=${v}.${forgedPayload}.${sig}`);
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { message: string } }).error.message).toContain('not one this deployment made');
    // The admin routes refuse a tenant token; the admin itself is told who holds it.
    expect((await squatter().request('POST', '/v1/admin/github/installations', { installationId: 501, tenantId: 'squatter' })).status).toBe(403);
    const reassign = await admin().request('POST', '/v1/admin/github/installations', { installationId: 501, tenantId: 'squatter' });
    expect(reassign).toMatchObject({ status: 409, json: { error: { code: 'installation_claimed' } } });
    expect((await fx.stack.deps.githubInstallations.get(501))!.tenantId).toBe('victim');
  });

  it("a signed delivery runs in the owner's tenant, found by repository id, and renaming the repository keeps it connected", async () => {
    fx.stack.model!.enqueue(text('Nothing to change.'));
    const sent = await sendDelivery(
      fx.stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: 1, title: 'Tidy the README' }, 'stratus', { login: 'owner' }),
    );
    expect(sent.body).toEqual({ accepted: true });
    const run = await runFor(victim(), sent.deliveryId);
    expect(run).toMatchObject({ repository: 'victim-org/private-app', outcome: 'no_changes' });
    expect((await squatter().request('GET', '/v1/github/runs')).json.runs).toEqual([]);
    // Renamed on GitHub: same id, new name; the connection follows.
    fx.gh.renameRepository(9001, 'victim-org/renamed-app');
    fx.gh.addIssue('victim-org/renamed-app', 2, { title: 'After the rename', body: 'b', user: { login: 'owner', type: 'User' } });
    fx.stack.model!.enqueue(text('Nothing to change.'));
    const renamed = { ...repo, fullName: 'victim-org/renamed-app' };
    const afterRename = await sendDelivery(
      fx.stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(renamed, { number: 2, title: 'After the rename' }, 'stratus', { login: 'owner' }),
    );
    expect(afterRename.body).toEqual({ accepted: true });
    expect(await runFor(victim(), afterRename.deliveryId)).toMatchObject({ repository: 'victim-org/renamed-app' });
    expect((await victim().request('GET', '/v1/github/repositories/victim-org/renamed-app')).json).toMatchObject({
      repositoryId: 9001,
      repository: 'victim-org/renamed-app',
    });
  });

  it('a different repository that takes over the old name, or the same id through another installation, reaches nothing', async () => {
    fx.gh.addRepository({ id: 9002, fullName: 'victim-org/private-app', installationId: 501 });
    const impostor = { ...repo, id: 9002 };
    const byName = await sendDelivery(fx.stack.apiUrl, SECRET, 'issues', labeledPayload(impostor, { number: 1, title: 'x' }, 'stratus', { login: 'owner' }));
    expect(byName.body).toEqual({ accepted: false, reason: 'repository not connected' });
    // The squatter claims an installation of its own; a delivery for the owner's repository id through it is not the owner's.
    expect((await installThroughSetup(squatter(), 503, 'squatter-org')).status).toBe(201);
    // Its own installation does not list the owner's repository: the same refusal as a tenant with none.
    const viaOwn = await squatter().request('POST', '/v1/github/repositories', { repository: 'victim-org/renamed-app' });
    expect({ status: viaOwn.status, json: viaOwn.json }).toEqual({
      status: 403,
      json: {
        error: {
          ...(refusal.json as { error: object }).error,
          message: (refusal.json as { error: { message: string } }).error.message.replace('private-app', 'renamed-app'),
        },
      },
    });
    const elsewhere = await sendDelivery(
      fx.stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload({ ...repo, fullName: 'victim-org/renamed-app', installationId: 503 }, { number: 2, title: 'x' }, 'stratus', { login: 'owner' }),
    );
    expect(elsewhere.body).toEqual({ accepted: false, reason: 'repository not connected' });
    for (const d of [byName, elsewhere]) expect(await fx.stack.deps.github.getDelivery(d.deliveryId)).toBeUndefined();
    // The worker checks again: a trigger for the owner's repository through another installation runs nothing.
    const trigger = {
      deliveryId: 'forged-hand-off',
      trigger: 'label',
      repository: 'victim-org/renamed-app',
      repositoryId: 9001,
      owner: 'victim-org',
      name: 'renamed-app',
      cloneUrl: repo.cloneUrl,
      defaultBranch: 'main',
      installationId: 503,
      number: 2,
      isPullRequest: false,
      title: 'x',
      sender: { login: 'owner', type: 'User' },
    };
    expect(await handleGithubWorkEvent(fx.stack.deps, { kind: 'github_work', trigger })).toBeUndefined();
    expect((await victim().request('GET', '/v1/github/runs?limit=200')).json.runs.some((r: { deliveryId: string }) => r.deliveryId === 'forged-hand-off')).toBe(
      false,
    );
  });

  it('revoking a claim stops its deliveries at once; a connection from before ids moves to its id only through an installation its tenant claims', async () => {
    // From before ids were recorded: keyed by name, no id, made by whoever connected first.
    const now = new Date().toISOString();
    const legacy = { fullName: 'victim-org/old-tool', createdAt: now, updatedAt: now, label: 'stratus', mention: '@stratus', allowBots: false };
    await fx.stack.deps.github.putRepo({ ...legacy, repository: 'victim-org/old-tool', tenantId: 'squatter' });
    makeBareRepo(fx.gitRoot.dir, 'victim-org/old-tool', { 'README.md': 'old\n' });
    fx.gh.addRepository({ id: 9003, fullName: 'victim-org/old-tool', installationId: 501 });
    fx.gh.addIssue('victim-org/old-tool', 1, { title: 'Old', body: 'b', user: { login: 'owner', type: 'User' } });
    const oldTool = { id: 9003, fullName: 'victim-org/old-tool', cloneUrl: `${fx.git.url}/victim-org/old-tool.git`, installationId: 501 };
    const squatted = await sendDelivery(fx.stack.apiUrl, SECRET, 'issues', labeledPayload(oldTool, { number: 1, title: 'Old' }, 'stratus', { login: 'owner' }));
    expect(squatted.body).toEqual({ accepted: false, reason: 'repository not connected' });
    // The owner's own connection from before moves to its id on its first delivery through its installation.
    await fx.stack.deps.github.putRepo({ ...legacy, repository: 'victim-org/old-tool', tenantId: 'victim' });
    fx.stack.model!.enqueue(text('Nothing to change.'));
    const moved = await sendDelivery(fx.stack.apiUrl, SECRET, 'issues', labeledPayload(oldTool, { number: 1, title: 'Old' }, 'stratus', { login: 'owner' }));
    expect(moved.body).toEqual({ accepted: true });
    expect(await runFor(victim(), moved.deliveryId)).toMatchObject({ repository: 'victim-org/old-tool' });
    expect((await victim().request('GET', '/v1/github/repositories/victim-org/old-tool')).json).toMatchObject({ repositoryId: 9003, installationId: 501 });
    // The admin revokes the owner's claim: nothing routes through it any more.
    expect((await admin().request('DELETE', '/v1/admin/github/installations/501')).json).toMatchObject({ installationId: 501, tenantId: 'victim' });
    const revoked = await sendDelivery(
      fx.stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload({ ...repo, fullName: 'victim-org/renamed-app' }, { number: 2, title: 'x' }, 'stratus', { login: 'owner' }),
    );
    expect(revoked.body).toEqual({ accepted: false, reason: 'repository not connected' });
    expect(
      (await admin().request('GET', '/v1/admin/github/installations')).json.installations.map((i: { installationId: number }) => i.installationId),
    ).toEqual([503]);
    // The squatter's org uninstalls the App: GitHub's signed installation.deleted releases the claim.
    const gone = await sendDelivery(fx.stack.apiUrl, SECRET, 'installation', installationDeletedPayload(503));
    expect(gone.body).toEqual({ accepted: false, reason: 'installation deleted' });
    expect((await squatter().request('GET', '/v1/github/installations')).json.installations).toEqual([]);
  });

  // Eight CLI processes: each loads the CLI anew, which takes seconds on a busy machine.
  it('the CLI prints the install link and connects, and the admin assigns, lists and revokes installations', { timeout: 180_000 }, async () => {
    const cli = (token: string, ...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const env = {
          ...process.env,
          STRATUS_CONFIG_DIR: path.join(fx.gitRoot.dir, 'cli-config'),
          STRATUS_URL: fx.stack.apiUrl,
          STRATUS_TOKEN: token,
          STRATUS_ADMIN_TOKEN: 'token-admin',
          NODE_OPTIONS: '',
        };
        execFile(process.execPath, [path.resolve('cli/stratus.mjs'), ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const link = await cli('token-victim', 'github', 'install');
    expect(link.code, link.stderr).toBe(0);
    expect(link.stdout).toContain(`${fx.gh.url}/apps/stratus-test/installations/new?state=v1.`);
    fx.gh.addInstallation(504, 'victim-labs');
    fx.gh.addRepository({ id: 9004, fullName: 'victim-labs/site', installationId: 504 });
    expect((await cli('token-victim', 'admin', 'github', 'assign', '--installation', '504', '--tenant', 'victim')).stdout).toContain(
      'installation 504 (victim-labs) belongs to tenant victim',
    );
    expect((await cli('token-victim', 'github', 'installations')).stdout).toContain('504');
    expect((await cli('token-squatter', 'github', 'connect', 'victim-labs/site')).code).toBe(3);
    const connected = await cli('token-victim', '--json', 'github', 'connect', 'victim-labs/site');
    expect(JSON.parse(connected.stdout)).toMatchObject({ repository: 'victim-labs/site', repositoryId: 9004, installationId: 504 });
    expect((await cli('token-victim', 'admin', 'github', 'ls')).stdout).toMatch(/504\s+victim\s+victim-labs\s+admin/);
    expect((await cli('token-victim', 'admin', 'github', 'revoke', '504')).stdout).toContain('no longer belongs to tenant victim');
  });
});

describe('GitHub repository ownership with a plain token: only the admin connects', () => {
  const fx = useGithubStack({ app: false });

  it('a tenant is told why it cannot connect; the admin connects for it, by repository id', async () => {
    makeBareRepo(fx.gitRoot.dir, 'victim-org/tool', { 'README.md': 'tool\n' });
    fx.gh.addRepository({ id: 7001, fullName: 'victim-org/tool' });
    fx.gh.addIssue('victim-org/tool', 1, { title: 'Tool', body: 'b', user: { login: 'owner', type: 'User' } });
    const squatter = apiClient(fx.stack.apiUrl, 'token-squatter');
    const squat = await squatter.request('POST', '/v1/github/repositories', { repository: 'victim-org/tool' });
    expect(squat.status).toBe(403);
    expect(squat.json.error.message).toContain('only the admin connects repositories: POST /v1/admin/github/repositories');
    // The setup link needs an App.
    expect((await squatter.request('POST', '/v1/github/installations/setup-url')).json.error.code).toBe('github_app_not_configured');
    const admin = apiClient(fx.stack.apiUrl, 'token-admin');
    expect((await admin.request('POST', '/v1/admin/github/repositories', { tenantId: 'victim', repository: 'victim-org/missing' })).status).toBe(404);
    const connected = await admin.request('POST', '/v1/admin/github/repositories', { tenantId: 'victim', repository: 'victim-org/tool' });
    expect(connected).toMatchObject({ status: 201, json: { repository: 'victim-org/tool', repositoryId: 7001, installationId: null } });
    const victim = apiClient(fx.stack.apiUrl, 'token-victim');
    fx.stack.model!.enqueue(text('Nothing to change.'));
    const ref = { id: 7001, fullName: 'victim-org/tool', cloneUrl: `${fx.git.url}/victim-org/tool.git` };
    const sent = await sendDelivery(fx.stack.apiUrl, SECRET, 'issues', labeledPayload(ref, { number: 1, title: 'Tool' }, 'stratus', { login: 'owner' }));
    expect(sent.body).toEqual({ accepted: true });
    expect(await runFor(victim, sent.deliveryId)).toMatchObject({ repository: 'victim-org/tool', outcome: 'no_changes' });
    // Another repository under the same name later: not this connection.
    const other = await sendDelivery(
      fx.stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload({ ...ref, id: 7002 }, { number: 1, title: 'Tool' }, 'stratus', { login: 'owner' }),
    );
    expect(other.body).toEqual({ accepted: false, reason: 'repository not connected' });
  });

  it('a connection from before ids stops routing until the admin connects the repository again', async () => {
    const now = new Date().toISOString();
    await fx.stack.deps.github.putRepo({
      repository: 'victim-org/legacy',
      fullName: 'victim-org/legacy',
      tenantId: 'squatter',
      createdAt: now,
      updatedAt: now,
      label: 'stratus',
      mention: '@stratus',
      allowBots: false,
    });
    const ref = { id: 7003, fullName: 'victim-org/legacy', cloneUrl: `${fx.git.url}/victim-org/legacy.git` };
    const sent = await sendDelivery(fx.stack.apiUrl, SECRET, 'issues', labeledPayload(ref, { number: 1, title: 'x' }, 'stratus', { login: 'owner' }));
    expect(sent.body).toEqual({ accepted: false, reason: 'repository not connected' });
    fx.gh.addRepository({ id: 7003, fullName: 'victim-org/legacy' });
    const admin = apiClient(fx.stack.apiUrl, 'token-admin');
    expect((await admin.request('POST', '/v1/admin/github/repositories', { tenantId: 'victim', repository: 'victim-org/legacy' })).status).toBe(201);
    // The name-keyed record the squatter made is gone.
    expect((await apiClient(fx.stack.apiUrl, 'token-squatter').request('GET', '/v1/github/repositories')).json.repositories).toEqual([]);
  });
});
