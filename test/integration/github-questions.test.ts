import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { LIBRARY_QUESTION as library } from '../support/questions.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';
const APP_ID = '4343';
const ask = (id: string) => ({
  content: [{ type: 'tool_use' as const, id, name: 'AskUserQuestion', input: { questions: [library] } }],
  stopReason: 'tool_use' as const,
});
const issue = { number: 1, title: 'Parse dates' };

/** An attended GitHub run's question: a comment that a writer's reply answers, through the webhook route and the stand-ins. */
describe('AskUserQuestion in GitHub runs', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let close: GithubAppStack['close'] | undefined;
  const repos: Record<string, RepoRef> = {};

  beforeAll(async () => {
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 78,
    }));
    gh.permissions.set('maintainer', 'write');
    gh.permissions.set('reader', 'read');
    for (const [id, name, settings] of [
      [2_001, 'acme/attended', { questionTimeoutSeconds: 3600 }],
      [2_002, 'acme/unattended', undefined],
      [2_003, 'acme/timed', { questionTimeoutSeconds: 1 }],
      [2_004, 'acme/console', { questionTimeoutSeconds: 3600 }],
    ] as const) {
      makeBareRepo(gitRoot.dir, name, { 'dates.js': 'module.exports = {};\n' });
      gh.addRepository({ id, fullName: name, installationId: 78 });
      gh.addIssue(name, 1, { title: issue.title, body: 'We need date parsing.', user: { login: 'reporter', type: 'User' } });
      repos[name] = { id, fullName: name, cloneUrl: `${git.url}/${name}.git`, installationId: 78 };
      expect((await api.request('POST', '/v1/github/repositories', { repository: name, ...(settings ? { settings } : {}) })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  const reply = async (repo: RepoRef, id: number, body: string, login: string, type = 'User') => {
    gh.addComment(repo.fullName, 1, { id, body, login });
    return sendDelivery(stack.apiUrl, SECRET, 'issue_comment', commentPayload(repo, issue, { id, body }, { login, type }));
  };

  /** The run that went on with the session after its wait closed outside GitHub. */
  const resumedRun = async (sessionId: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs;
      const run = runs.find((r: any) => r.trigger === 'resumed' && r.sessionId === sessionId && !['queued', 'running'].includes(r.outcome));
      if (run) return run;
      if (Date.now() > deadline) throw new Error(`no resumed run for ${sessionId}: ${JSON.stringify(runs)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('posts the question as a comment; a reader and the bot are ignored; a writer’s reply answers it and the run goes on to its PR', async () => {
    const repo = repos['acme/attended']!;
    stack.model!.enqueue(ask('toolu_gh'));
    const labeled = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, issue, 'stratus', { login: 'maintainer' }));
    const asked = await finishedRun(api, labeled.deliveryId);
    expect(asked).toMatchObject({ outcome: 'awaiting_answer', trigger: 'label' });
    const [progress, question] = gh.commentsOn(repo.fullName, 1);
    expect(progress!.body).toContain('asked a question in session');
    expect(question!.body).toContain(`❓ **Stratus** has a question in session \`${asked.sessionId}\`:`);
    expect(question!.body).toContain('**Which library should we use?** (Library)\n1. **dayjs** — Small\n2. **luxon** — Rich');
    expect((await api.request('GET', `/v1/sessions/${asked.sessionId}`)).json.status).toBe('awaiting_answer');

    // A reader's reply is refused (no write access); the bot's own comment is not even a run.
    const byReader = await reply(repo, 501, 'dayjs please', 'reader');
    expect(await finishedRun(api, byReader.deliveryId)).toMatchObject({ outcome: 'refused', trigger: 'answer' });
    // The bot's own question comment (its mark) is Stratus hearing itself; another bot's reply is no answer either.
    const byBot = await reply(repo, 502, question!.body, 'stratus-app[bot]', 'Bot');
    expect(byBot.body).toEqual({ accepted: false, reason: 'the comment is one Stratus posted' });
    const byOtherBot = await reply(repo, 503, 'dayjs', 'renovate[bot]', 'Bot');
    expect(byOtherBot.body).toEqual({ accepted: false, reason: "a bot's comment does not answer a question" });
    expect((await api.request('GET', `/v1/sessions/${asked.sessionId}/questions`)).json.questions).toHaveLength(1);

    // A writer's reply that quotes the question and picks option 2 by number.
    stack.model!.enqueue({ content: [bash('t_fix', 'echo "module.exports = require(\'luxon\');" > dates.js')], stopReason: 'tool_use' }, text('Used luxon.'));
    const answered = await reply(repo, 503, '> Which library should we use?\n\n2', 'maintainer');
    expect(answered.body).toEqual({ accepted: true });
    const run = await finishedRun(api, answered.deliveryId);
    expect(run).toMatchObject({ outcome: 'pr_opened', trigger: 'answer', sessionId: asked.sessionId });
    const result = (await api.messages(asked.sessionId)).flatMap((m: any) => m.content).find((b: any) => b.tool_use_id === 'toolu_gh');
    expect(result.content).toBe(
      'User has answered your questions: "Which library should we use?"="luxon". You can now continue with the user\'s answers in mind.',
    );
    // Answered: a later comment is an ordinary one again (no mention: no run).
    expect((await reply(repo, 504, 'thanks!', 'maintainer')).body).toMatchObject({ accepted: false });
  });

  it('a question that times out goes on with the agent’s own choice and to a PR, once, with a run record of its own', async () => {
    const repo = repos['acme/timed']!;
    stack.model!.enqueue(ask('toolu_timed'));
    const labeled = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, issue, 'stratus', { login: 'maintainer' }));
    const asked = await finishedRun(api, labeled.deliveryId);
    expect(asked).toMatchObject({ outcome: 'awaiting_answer', trigger: 'label' });
    expect(gh.pulls(repo.fullName)).toEqual([]);

    // The question's second runs out; the local scheduler's sweep closes it and resumes the turn.
    stack.model!.enqueue({ content: [bash('t_own', 'echo "module.exports = require(\'dayjs\');" > dates.js')], stopReason: 'tool_use' }, text('Chose dayjs.'));
    await new Promise((r) => setTimeout(r, 1_100));
    await stack.scheduler.tick();
    const resumed = await resumedRun(asked.sessionId);
    expect(resumed).toMatchObject({ outcome: 'pr_opened', trigger: 'resumed', sender: 'maintainer', branch: asked.branch });
    expect(gh.pulls(repo.fullName)).toHaveLength(1);
    const result = (await api.messages(asked.sessionId)).flatMap((m: any) => m.content).find((b: any) => b.tool_use_id === 'toolu_timed');
    expect(result.content).toContain('Which library should we use?');
    // Another sweep finds nothing to close: no second run, no second PR.
    await stack.scheduler.tick();
    const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs.filter((r: any) => r.sessionId === asked.sessionId);
    expect(runs.map((r: any) => r.trigger).sort()).toEqual(['label', 'resumed']);
    expect(gh.pulls(repo.fullName)).toHaveLength(1);
  });

  it('a question answered through the API (the console, the CLI) goes on to a PR through the worker', async () => {
    const repo = repos['acme/console']!;
    stack.model!.enqueue(ask('toolu_api'));
    const labeled = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, issue, 'stratus', { login: 'maintainer' }));
    const asked = await finishedRun(api, labeled.deliveryId);
    expect(asked.outcome).toBe('awaiting_answer');
    stack.model!.enqueue({ content: [bash('t_api', 'echo "module.exports = require(\'dayjs\');" > dates.js')], stopReason: 'tool_use' }, text('Used dayjs.'));
    const answered = await api.request('POST', `/v1/sessions/${asked.sessionId}/questions/toolu_api/answer`, { answers: { [library.question]: 'dayjs' } });
    expect(answered.status).toBe(200);
    expect(await resumedRun(asked.sessionId)).toMatchObject({ outcome: 'pr_opened', trigger: 'resumed' });
    expect(gh.pulls(repo.fullName)).toHaveLength(1);
    // The thread no longer waits: a later plain comment is no answer (and starts no run).
    expect((await reply(repo, 601, 'thanks!', 'maintainer')).body).toMatchObject({ accepted: false });
  });

  it('an unattended repository (no questionTimeoutSeconds) gets "no answer" at once and never waits', async () => {
    const repo = repos['acme/unattended']!;
    stack.model!.enqueue(ask('toolu_un'), text('Chose dayjs myself; nothing to change.'));
    const labeled = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, issue, 'stratus', { login: 'maintainer' }));
    const run = await finishedRun(api, labeled.deliveryId);
    expect(run.outcome).toBe('no_changes');
    const result = (await api.messages(run.sessionId)).flatMap((m: any) => m.content).find((b: any) => b.tool_use_id === 'toolu_un');
    expect(result.content).toContain('No one can answer questions in this session.');
    expect(gh.commentsOn(repo.fullName, 1).some((c) => c.body.includes('has a question'))).toBe(false);
  });
});
