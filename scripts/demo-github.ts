/**
 * `npm run demo:github`: the whole GitHub flow on this machine, with no GitHub account. It starts
 * a local git server holding a tiny repository whose test fails, a local stand-in for the GitHub
 * REST API (a GitHub App's installation tokens, issues, comments, pull requests), and the local
 * stack with the scripted model; installs the App through the setup link (which claims the
 * installation for the tenant), connects the repository, sends a signed `issues.labeled`
 * delivery, and prints the pushed branch, the pull request and the progress comment, with the
 * time from the webhook to its 202 and to the pull request; then a review comment answered in its
 * thread and a failing check fixed (scripts/demo-github-follow-ups.ts).
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SettingError } from '../functions/deps/settings.ts';
import { SCRIPTED_MODEL_NAME } from '../functions/model/model-names.ts';
import { localPortsFromEnv, PORT_VARIABLES, type LocalPorts } from '../local/ports.ts';
import { startLocalStack } from '../local/stack.ts';
import { startGitHttpServer } from '../test/support/git-http-server.ts';
import { startGithubApiServer } from '../test/support/github-api-server.ts';
import { labeledPayload, makeBareRepo, sendDelivery } from '../test/support/github-fixture.ts';
import { showFailingCheckFixed, showReviewAnswered } from './demo-github-follow-ups.ts';

const SECRET = 'demo-webhook-secret';
const APP_ID = '1001';
const dir = mkdtempSync(path.join(os.tmpdir(), 'stratus-demo-github-'));
const say = (line = '') => console.log(line);

// The same port settings as `npm start`; unset, every part (the API too) takes any free port,
// so the demo runs beside a running `npm start`.
let ports: LocalPorts;
try {
  ports = localPortsFromEnv(process.env);
} catch (err) {
  if (!(err instanceof SettingError)) throw err;
  console.error(`demo:github: ${err.message}`);
  process.exit(2);
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const gh = await startGithubApiServer({ appId: APP_ID, appPublicKey: publicKey, installationId: 1 });
const git = await startGitHttpServer({ projectRoot: path.join(dir, 'git'), token: (t) => gh.isValidToken(t) });
const repo = makeBareRepo(path.join(dir, 'git'), 'demo/calculator', {
  'add.js': 'module.exports = (a, b) => a - b;\n',
  'test.js':
    "const add = require('./add.js');\nif (add(2, 3) !== 5) { console.error('FAIL: add(2, 3) =', add(2, 3)); process.exit(1); }\nconsole.log('ok: add(2, 3) = 5');\n",
  'README.md': '# calculator\n\n`node test.js` runs the test.\n',
});
const stack = await startLocalStack({
  dataDir: path.join(dir, 'stack'),
  port: ports.api,
  ports,
  model: { name: SCRIPTED_MODEL_NAME },
  logLevel: 'warn',
  github: {
    webhookSecret: SECRET,
    appId: APP_ID,
    privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    apiUrl: gh.url,
  },
});

try {
  say(`git server (smart HTTP, token-checked): ${git.url}/demo/calculator.git`);
  say(`GitHub REST stand-in:                   ${gh.url}`);
  say(`Stratus API:                            ${stack.apiUrl} (scripted model, ${PORT_VARIABLES.api})`);
  say(
    `DynamoDB · S3 · Lambda Invoke stand-ins: ${stack.urls.dynamodb} · ${stack.urls.s3} · ${stack.urls.lambda} (${PORT_VARIABLES.dynamodb}, ${PORT_VARIABLES.s3}, ${PORT_VARIABLES.lambda})`,
  );
  say(`scripted model:                         ${stack.model!.url} (${PORT_VARIABLES.model})`);
  const asTenant = { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' };
  // The App's setup flow: the tenant asks for a setup link (a signed state naming it), the App is
  // installed on GitHub, and GitHub sends the browser back to the setup URL, which claims it.
  const link = (await (await fetch(`${stack.apiUrl}/v1/github/installations/setup-url`, { method: 'POST', headers: asTenant })).json()) as {
    url: string;
    state: string;
  };
  say(`\nPOST /v1/github/installations/setup-url → ${link.url.slice(0, 80)}…`);
  gh.addInstallation(1, 'demo');
  gh.addRepository({ id: 4_242, fullName: 'demo/calculator', installationId: 1 });
  const claimed = await fetch(`${stack.apiUrl}/v1/github/installations/setup?installation_id=1&setup_action=install&state=${encodeURIComponent(link.state)}`);
  say(`GET /v1/github/installations/setup?installation_id=1&state=… (GitHub's redirect) → ${claimed.status} ${await claimed.text()}`);
  const connect = await fetch(`${stack.apiUrl}/v1/github/repositories`, {
    method: 'POST',
    headers: asTenant,
    // Failing checks of its pull requests are fixed too (off unless a repository enables it).
    body: JSON.stringify({ repository: 'demo/calculator', label: 'stratus', settings: { failingChecks: { enabled: true } } }),
  });
  say(`POST /v1/github/repositories → ${connect.status} ${await connect.text()}`);

  gh.permissions.set('maintainer', 'admin');
  gh.addIssue('demo/calculator', 1, {
    title: 'add() returns the wrong sum',
    body: '`node test.js` fails: add(2, 3) gives -1 instead of 5.',
    user: { login: 'maintainer', type: 'User' },
  });
  // What the scripted model answers, in order: it reads the file, edits it, runs the test, sums up.
  stack.model!.enqueue(
    {
      content: [
        { type: 'text', text: 'Let me look at add.js.' },
        { type: 'tool_use', name: 'Read', input: { file_path: '/workspace/add.js' } },
      ],
      stopReason: 'tool_use',
    },
    {
      content: [{ type: 'tool_use', name: 'Edit', input: { file_path: '/workspace/add.js', old_string: 'a - b', new_string: 'a + b' } }],
      stopReason: 'tool_use',
    },
    { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'node test.js', description: 'Run the test' } }], stopReason: 'tool_use' },
    { content: [{ type: 'text', text: 'add() subtracted its arguments; it now adds them. `node test.js` passes (add(2, 3) = 5).' }], stopReason: 'end_turn' },
  );

  const ref = { id: 4_242, fullName: 'demo/calculator', cloneUrl: `${git.url}/demo/calculator.git`, installationId: 1 };
  const payload = labeledPayload(ref, { number: 1, title: 'add() returns the wrong sum' }, 'stratus', { login: 'maintainer' });
  const sentAt = Date.now();
  const sent = await sendDelivery(stack.apiUrl, SECRET, 'issues', payload);
  say(`\nPOST /v1/github/webhook (issues.labeled, signed) → ${sent.status} in ${sent.ms.toFixed(0)} ms`);

  let run: Record<string, unknown> | undefined;
  while (!run) {
    const res = await fetch(`${stack.apiUrl}/v1/github/runs`, { headers: { authorization: `Bearer ${stack.token}` } });
    const found = ((await res.json()) as { runs: Record<string, unknown>[] }).runs.find((r) => r.deliveryId === sent.deliveryId);
    if (found && !['queued', 'running'].includes(String(found.outcome))) run = found;
    else await new Promise((r) => setTimeout(r, 100));
    if (Date.now() - sentAt > 120_000) throw new Error('the run did not finish within 2 minutes');
  }
  const prCall = gh.calls.find((c) => c.method === 'POST' && c.path.endsWith('/pulls'));
  say(`run: ${run.outcome} (session ${run.sessionId})`);
  say(`webhook → PR opened: ${prCall ? `${prCall.at - sentAt} ms` : 'no PR'}; webhook → run recorded: ${Date.now() - sentAt} ms`);

  say(`\n== the pushed branch: ${run.branch}`);
  say(repo.log(String(run.branch)).join('\n'));
  say(execFileSync('git', ['--git-dir', repo.dir, 'diff', 'main', String(run.branch)], { encoding: 'utf8' }));
  const [pr] = gh.pulls('demo/calculator');
  if (pr) {
    say(`== the pull request: ${run.pullRequestUrl}${pr.pull!.draft ? ' (draft)' : ''}`);
    say(`${pr.title}  [${pr.pull!.head.ref} → ${pr.pull!.base.ref}]\n${pr.body}`);
  }
  say('\n== the progress comment on issue #1');
  for (const c of gh.commentsOn('demo/calculator', 1)) say(c.body);
  if (pr) {
    const ctx = { stack, gh, repo, ref, secret: SECRET, pr: { number: pr.number, title: pr.title, branch: String(run.branch) }, say };
    await showReviewAnswered(ctx);
    await showFailingCheckFixed(ctx);
  }
} finally {
  await stack.stop();
  await git.close();
  await gh.close();
  rmSync(dir, { recursive: true, force: true });
}
