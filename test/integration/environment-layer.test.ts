import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { apiClient } from '../support/api-client.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { labeledPayload, makeBareRepo, sendDelivery, type RepoRef, finishedRun } from '../support/github-fixture.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';
const APP_ID = '4243';
const PREFIX = 'environments/local/github/acme/deps/';
/**
 * The repository's set-up installs its one dependency, 401 files (offline: the test's stand-in
 * for `npm ci` writes what the registry would have delivered).
 */
const REPO = {
  'package.json': '{"name":"deps","dependencies":{"left-pad":"1.3.0"}}\n',
  'package-lock.json': '{"lockfileVersion":3,"packages":{"node_modules/left-pad":{"version":"1.3.0"}}}\n',
  '.gitignore': 'node_modules/\n',
  '.stratus/setup.sh':
    'set -e\nmkdir -p node_modules/left-pad/lib\n' +
    "echo 'module.exports = (s, n, c) => String(s).padStart(n, c);' > node_modules/left-pad/index.js\n" +
    'for i in $(seq 1 400); do echo "// $i" > node_modules/left-pad/lib/f$i.js; done\necho installed\n',
  'test.js': "const pad = require('left-pad');\nif (pad('7', 3, '0') !== '007') process.exit(1);\nconsole.log('pad ok');\n",
};

describe('cached environment across GitHub runs', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let admin: GithubAppStack['admin'];
  let close: GithubAppStack['close'] | undefined;
  let repo: RepoRef;

  beforeAll(async () => {
    ({ stack, gh, git, api, admin, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 78,
    }));
    makeBareRepo(gitRoot.dir, 'acme/deps', REPO);
    repo = { id: 2_001, fullName: 'acme/deps', cloneUrl: `${git.url}/acme/deps.git`, installationId: 78 };
    gh.addRepository({ id: 2_001, fullName: 'acme/deps', installationId: 78 });
    gh.permissions.set('maintainer', 'write');
    for (const n of [1, 2]) gh.addIssue('acme/deps', n, { title: `pad issue ${n}`, body: 'pad it', user: { login: 'reporter', type: 'User' } });
    expect((await api.request('POST', '/v1/github/repositories', { repository: 'acme/deps' })).status).toBe(201);
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  async function runIssue(n: number) {
    stack.model!.enqueue(
      { content: [bash(`t${n}`, `node test.js && ls node_modules/left-pad/lib | wc -l && echo run ${n} > RESULT_${n}.txt`)], stopReason: 'tool_use' },
      text(`Done ${n}.`),
    );
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: n, title: `pad issue ${n}` }, 'stratus', { login: 'maintainer' }),
    );
    expect(sent.status).toBe(202);
    return (await finishedRun(api, sent.deliveryId, 90_000)) as { sessionId: string; outcome: string; branch: string };
  }
  async function layerKeys(): Promise<string[]> {
    const s3 = await stack.deps.workspaceStorage({ ...stack.deps.config.localCredentials! });
    const out = await s3.send(new ListObjectsV2Command({ Bucket: stack.deps.config.bucket, Prefix: 'environments/' }));
    return (out.Contents ?? []).map((o) => o.Key!);
  }
  async function toolOutput(sessionId: string, id: string): Promise<string> {
    const messages = await api.messages(sessionId);
    return JSON.stringify(
      messages.flatMap((m) => m.content).find((b: { type: string; tool_use_id?: string }) => b.type === 'tool_result' && b.tool_use_id === id),
    );
  }

  it('the first run installs and stores the layer; the second starts with the dependencies installed and runs no set-up', async () => {
    const first = await runIssue(1);
    expect(first.outcome).toBe('pr_opened');
    const one = (await api.request('GET', `/v1/sessions/${first.sessionId}`)).json;
    expect(one.setup).toMatchObject({ status: 'succeeded', source: 'repository_file' });
    expect(one.setup.restored).not.toBe(true);
    expect(one.setup.outputTail).toContain('installed');
    expect(await toolOutput(first.sessionId, 't1')).toContain('pad ok\\n400');
    const keys = await layerKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${PREFIX}[0-9a-f]{64}\\.tar\\.gz$`));

    const second = await runIssue(2);
    expect(second.outcome).toBe('pr_opened');
    const two = (await api.request('GET', `/v1/sessions/${second.sessionId}`)).json;
    expect(two.setup).toMatchObject({ status: 'succeeded', restored: true });
    expect(two.setup.outputTail ?? '').not.toContain('installed');
    expect(await toolOutput(second.sessionId, 't2')).toContain('pad ok\\n400');

    // Workspace changes only, in the diff, the file list and the pushed commit: never the layer.
    const diff = (await api.request('GET', `/v1/sessions/${second.sessionId}/workspace/diff`)).json;
    expect(diff.files.map((f: { path: string }) => f.path)).toEqual(['RESULT_2.txt']);
    const files = (await api.request('GET', `/v1/sessions/${second.sessionId}/workspace/files`)).json.files.map((f: { path: string }) => f.path);
    expect(files.some((p: string) => p.startsWith('node_modules'))).toBe(false);
    const [pr] = gh.pulls('acme/deps').filter((p) => p.pull?.head.ref === second.branch);
    expect(pr).toBeDefined();
  }, 180_000);

  it('DELETE …/environment drops the layers of the tenant’s repository only, and answers 404 for a repository it did not connect', async () => {
    const created = await admin.request('POST', '/v1/admin/tokens', { tenantId: 'other-tenant', label: 'env test' });
    expect(created.status).toBe(201);
    const other = apiClient(stack.apiUrl, created.json.token);
    expect((await other.request('DELETE', '/v1/github/repositories/acme/deps/environment')).status).toBe(404);
    expect(await layerKeys()).toHaveLength(1);
    expect((await api.request('DELETE', '/v1/github/repositories/acme/nope/environment')).status).toBe(404);
    expect((await api.request('DELETE', '/v1/github/repositories/a..b/c/environment')).status).toBe(404);

    const dropped = await api.request('DELETE', '/v1/github/repositories/acme/deps/environment');
    expect(dropped.status).toBe(200);
    expect(dropped.json).toEqual({ repository: 'acme/deps', deleted: 1 });
    expect(await layerKeys()).toEqual([]);

    // Disconnecting the repository drops its layers too.
    const s3 = await stack.deps.workspaceStorage({ ...stack.deps.config.localCredentials! });
    await s3.send(new PutObjectCommand({ Bucket: stack.deps.config.bucket, Key: `${PREFIX}${'d'.repeat(64)}.tar.gz`, Body: 'layer' }));
    expect(await layerKeys()).toHaveLength(1);
    expect((await api.request('DELETE', '/v1/github/repositories/acme/deps')).status).toBe(204);
    expect(await layerKeys()).toEqual([]);
  });
});
