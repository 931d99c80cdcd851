import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/stack.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';

const SECRET = 'webhook-secret-for-tests';
const APP_ID = '4243';
const FAILING = { 'add.js': 'module.exports = (a, b) => a - b;\n' };
const PLAN = '1. Make add() add\n2. Ask @someone to review';
const exitPlan = (id: string, plan: string) => ({
  content: [{ type: 'tool_use' as const, id, name: 'ExitPlanMode', input: { plan } }],
  stopReason: 'tool_use' as const,
});

/** A repository set to "plan first": the run posts its plan, a writer's reply approves or rejects it (docs/tools.md). */
describe('GitHub runs of a "plan first" repository', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let close: GithubAppStack['close'] | undefined;
  let main: ReturnType<typeof makeBareRepo>;
  let repo: RepoRef;

  beforeAll(async () => {
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 78,
    }));
    main = makeBareRepo(gitRoot.dir, 'acme/planned', FAILING);
    repo = { id: 2_001, fullName: 'acme/planned', cloneUrl: `${git.url}/acme/planned.git`, installationId: 78 };
    gh.addRepository({ id: 2_001, fullName: 'acme/planned', installationId: 78 });
    gh.permissions.set('maintainer', 'write');
    gh.addIssue('acme/planned', 1, { title: 'add() returns the wrong sum', body: 'add(2, 3) gives -1.', user: { login: 'reporter', type: 'User' } });
    gh.addIssue('acme/planned', 2, { title: 'Document add()', body: 'Nobody knows what add() does.', user: { login: 'reporter', type: 'User' } });
    const connect = await api.request('POST', '/v1/github/repositories', { repository: 'acme/planned', settings: { planFirst: true } });
    expect(connect.status).toBe(201);
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  const reply = async (id: number, body: string) => {
    gh.addComment('acme/planned', 1, { id, body, login: 'maintainer' });
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issue_comment',
      commentPayload(repo, { number: 1, title: 'add() returns the wrong sum' }, { id, body }, { login: 'maintainer' }),
    );
    return finishedRun(api, sent.deliveryId);
  };

  it('posts the plan and changes nothing; a rejection gets a new plan; an approval runs it to a pull request', async () => {
    stack.model!.enqueue({ content: [bash('t0', 'cat add.js')], stopReason: 'tool_use' }, exitPlan('toolu_p1', PLAN));
    const sent = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: 1, title: 'add() returns the wrong sum' }, 'stratus', { login: 'maintainer' }),
    );
    const first = await finishedRun(api, sent.deliveryId);
    expect(first).toMatchObject({ outcome: 'awaiting_plan', sessionId: expect.any(String) });
    expect(gh.pulls('acme/planned')).toEqual([]);
    const session = (await api.request('GET', `/v1/sessions/${first.sessionId}`)).json;
    expect([session.permissions.mode, session.plans.map((p: any) => p.plan)]).toEqual(['plan', [PLAN]]);
    const planComment = gh.commentsOn('acme/planned', 1).find((c) => c.body.includes('**Plan for approval**'))!;
    // The plan as written, except that a mention in it cannot notify anyone.
    expect(planComment.body).toContain('1. Make add() add\n2. Ask @\u2060someone to review');
    expect(planComment.body).toContain('Reply `@stratus approve` to go ahead with this plan, or `@stratus reject` followed by what to change.');

    stack.model!.enqueue(exitPlan('toolu_p2', '1. Make add() add, with a test'));
    const rejected = await reply(301, '@stratus reject add a test too');
    expect(rejected).toMatchObject({ outcome: 'awaiting_plan', sessionId: first.sessionId });
    const feedback = stack.model!.requests.at(-1)!.body.messages.at(-1)!.content;
    expect(JSON.stringify(feedback)).toContain('To tell you how to proceed, the user said:\\nadd a test too');

    stack.model!.enqueue({ content: [bash('t1', "sed -i 's/a - b/a + b/' add.js")], stopReason: 'tool_use' }, text('Fixed add().'));
    const approved = await reply(302, '@stratus approve');
    expect(approved).toMatchObject({ outcome: 'pr_opened', sessionId: first.sessionId });
    expect(main.show(approved.branch, 'add.js')).toBe('module.exports = (a, b) => a + b;');
    const results = (await api.messages(first.sessionId)).flatMap((m: any) => m.content).filter((b: any) => b.type === 'tool_result');
    expect(results.find((r: any) => r.tool_use_id === 'toolu_p2').content).toMatch(/^User has approved your plan\./);
    // The run goes on in the repository's mode (the deployment's default here), never back in plan mode.
    expect((await api.request('GET', `/v1/sessions/${first.sessionId}`)).json.permissions.mode).toBe('bypassPermissions');
  });

  it('a plan approved through the API (not a reply) goes on to a pull request, with a run record of its own', async () => {
    const docs = { number: 2, title: 'Document add()' };
    stack.model!.enqueue(exitPlan('toolu_api', '1. Write ADD.md'));
    const sent = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, docs, 'stratus', { login: 'maintainer' }));
    const first = await finishedRun(api, sent.deliveryId);
    expect(first).toMatchObject({ outcome: 'awaiting_plan', number: 2 });
    const { cwd } = (await api.request('GET', `/v1/sessions/${first.sessionId}`)).json;
    const write = { type: 'tool_use' as const, id: 't_doc', name: 'Write', input: { file_path: `${cwd}/ADD.md`, content: 'add(a, b) adds.\n' } };
    stack.model!.enqueue({ content: [write], stopReason: 'tool_use' }, text('Documented add().'));
    const decided = await api.request('POST', `/v1/sessions/${first.sessionId}/plans/toolu_api`, { decision: 'approve', mode: 'acceptEdits' });
    expect(decided.status).toBe(200);
    const deadline = Date.now() + 60_000;
    let resumed: any;
    while (!resumed) {
      const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs;
      resumed = runs.find((r: any) => r.trigger === 'resumed' && r.sessionId === first.sessionId && !['queued', 'running'].includes(r.outcome));
      if (Date.now() > deadline) throw new Error(`no resumed run: ${JSON.stringify(runs)}`);
      if (!resumed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(resumed).toMatchObject({ outcome: 'pr_opened', number: 2, branch: first.branch });
    expect(main.show(resumed.branch, 'ADD.md')).toBe('add(a, b) adds.');
    expect(gh.pulls('acme/planned')).toHaveLength(2);
  });
});
