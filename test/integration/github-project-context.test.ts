import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/stack.ts';
import type { MessagesRequest } from '../../local/scripted-model/script.ts';
import { systemText } from '../support/agent-requests.ts';
import { apiClient } from '../support/api-client.ts';
import { startGitHttpServer } from '../support/git-http-server.ts';
import { startGithubApiServer, type GithubApiServer } from '../support/github-api-server.ts';
import { labeledPayload, makeBareRepo, sendDelivery, finishedRun } from '../support/github-fixture.ts';
import { text, unscripted } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';

describe('a GitHub run is told about its repository', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: Awaited<ReturnType<typeof startGitHttpServer>>;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    gh = await startGithubApiServer({ appId: '4242', appPublicKey: publicKey, installationId: 77 });
    git = await startGitHttpServer({ projectRoot: gitRoot.dir, token: (t) => gh.isValidToken(t) });
    stack = await startLocalStack({
      dataDir: tmp.dir,
      brain: unscripted,
      github: { webhookSecret: SECRET, appId: '4242', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), apiUrl: gh.url },
    });
    api = apiClient(stack.apiUrl, stack.token);
    makeBareRepo(gitRoot.dir, 'acme/calc', {
      'CLAUDE.md': 'Run `node test.js` before you finish.\n',
      'lib/CLAUDE.md': 'lib/ is plain CommonJS.\n',
      'lib/add.js': 'module.exports = (a, b) => a - b;\n',
    });
    gh.addInstallation(77, 'acme');
    gh.addRepository({ id: 1_001, fullName: 'acme/calc', installationId: 77 });
    const admin = apiClient(stack.apiUrl, readFileSync(path.join(tmp.dir, 'admin-token'), 'utf8').trim());
    expect((await admin.request('POST', '/v1/admin/github/installations', { installationId: 77, tenantId: 'local' })).status).toBe(201);
    gh.permissions.set('maintainer', 'write');
    gh.addIssue('acme/calc', 1, { title: 'add() returns the wrong sum', body: 'add(2, 3) gives -1.', user: { login: 'reporter', type: 'User' } });
    const connect = await api.request('POST', '/v1/github/repositories', {
      repository: 'acme/calc',
      settings: { instructions: 'Keep pull requests under 200 lines.' },
    });
    expect(connect.status).toBe(201);
    expect(connect.json.settings).toMatchObject({ instructions: 'Keep pull requests under 200 lines.' });
    expect((await api.request('PUT', '/v1/tenant/settings', { instructions: 'Our company style guide: short functions.' })).status).toBe(200);
  });

  afterAll(async () => {
    await stack?.stop();
    await git?.close();
    await gh?.close();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  it('its first request carries the tenant, the repository connection and the repository files, and a git snapshot of the branch it checked out', async () => {
    const before = stack.model!.requests.length;
    stack.model!.enqueue({ content: [{ type: 'tool_use', id: 'r1', name: 'Read', input: { file_path: '/workspace/lib/add.js' } }] }, text('Looked.'));
    const repo = { id: 1_001, fullName: 'acme/calc', cloneUrl: `${git.url}/acme/calc.git`, installationId: 77 };
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: 1, title: 'add() returns the wrong sum' }, 'stratus', { login: 'maintainer' }),
    );
    expect(sent.status).toBe(202);
    await runFor(sent.deliveryId);
    const [first, second] = stack.model!.requests.slice(before).map((r) => r.body) as [MessagesRequest, MessagesRequest];

    const opening = (first.messages[0]!.content as unknown as { text: string }[])[0]!.text;
    expect(opening).toBe(
      '<system-reminder>\n' +
        'The people who run this project ask you to follow these instructions. They take precedence over your general habits; where two disagree, the more specific one (a later part) wins.\n\n' +
        "Instructions from the tenant's settings (for every session of this tenant):\n\nOur company style guide: short functions.\n\n" +
        'Instructions from the settings of the repository connection acme/calc (for every run on it):\n\nKeep pull requests under 200 lines.\n\n' +
        "Instructions from /workspace/CLAUDE.md (the project's CLAUDE.md):\n\nRun `node test.js` before you finish.\n\n" +
        `Today's date is ${new Date().toISOString().slice(0, 10)}.\n</system-reminder>`,
    );
    const system = systemText(first);
    expect(system).toContain('- Git repository: yes\n');
    expect(system).toMatch(
      /\nCurrent branch: stratus\/issue-1-add-returns-the-wrong-sum\nMain branch \(the usual base of a pull request\): main\nStatus:\n\(clean\)\nRecent commits:\n[0-9a-f]{7,} initial$/,
    );
    const result = (second.messages.at(-1)!.content as unknown as { content: string }[])[0]!.content;
    expect(result).toBe(
      '1\tmodule.exports = (a, b) => a - b;\n2\t\n\n<system-reminder>\nInstructions from /workspace/lib/CLAUDE.md (for the files under /workspace/lib/):\n\nlib/ is plain CommonJS.\n</system-reminder>',
    );
  });

  const runFor = (deliveryId: string) => finishedRun(api, deliveryId);
});
