import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triggerFromDelivery } from '../../functions/github-api/github-trigger.ts';
import { handleGithubWorkerEvent } from '../../functions/github/github-worker-event.ts';
import type { LocalStack } from '../../local/stack.ts';
import type { GithubApiServer } from '../support/github-api-server.ts';
import { startGithubAppStack, type GithubAppStack } from '../support/github-app-stack.ts';
import { commentPayload, finishedRun, labeledPayload, makeBareRepo, sendDelivery, type RepoRef } from '../support/github-fixture.ts';
import { bash, text } from '../support/stack-fixture.ts';
import { makeTempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const SECRET = 'queue-secret';
const APP_ID = '6161';

describe('GitHub: a comment while a run works is queued into it, not dropped and not run twice', () => {
  const tmp = makeTempDir();
  const gitRoot = makeTempDir();
  let stack: LocalStack;
  let gh: GithubApiServer;
  let git: GithubAppStack['git'];
  let api: GithubAppStack['api'];
  let close: GithubAppStack['close'] | undefined;
  let repo: RepoRef;
  let remote: ReturnType<typeof makeBareRepo>;

  beforeAll(async () => {
    ({ stack, gh, git, api, close } = await startGithubAppStack({
      dataDir: tmp.dir,
      gitRoot: gitRoot.dir,
      appId: APP_ID,
      webhookSecret: SECRET,
      installationId: 66,
    }));
    remote = makeBareRepo(gitRoot.dir, 'acme/queue', { 'README.md': 'queue\n' });
    repo = { id: 4_001, fullName: 'acme/queue', cloneUrl: `${git.url}/acme/queue.git`, installationId: 66 };
    gh.addRepository({ id: 4_001, fullName: 'acme/queue', installationId: 66 });
    gh.permissions.set('maintainer', 'write');
    gh.permissions.set('reviewer', 'write');
    expect((await api.request('POST', '/v1/github/repositories', { repository: 'acme/queue' })).status).toBe(201);
  });

  afterAll(async () => {
    await close?.();
    tmp.cleanup();
    gitRoot.cleanup();
  });

  const mention = (number: number, title: string, id: number, body: string) => {
    gh.addComment('acme/queue', number, { id, body, login: 'reviewer' });
    return commentPayload(repo, { number, title }, { id, body }, { login: 'reviewer' });
  };
  /** Waits until the model has been asked `n` more times than `before`. */
  const modelCalls = (before: number, n: number) =>
    until(
      async () => stack.model!.requests.length,
      (len) => len >= before + n,
    );
  const userTexts = (messages: { kind: string; role?: string; content: { type: string; text?: string }[] }[]) =>
    messages.flatMap((m) => m.content.filter((b) => b.type === 'text').map((b) => b.text ?? ''));

  it('three concurrent mentions while the run works reach its next model call once each, with a 👀 on each; a repeat of one changes nothing', async () => {
    gh.addIssue('acme/queue', 1, { title: 'Write notes', body: 'Write notes.txt', user: { login: 'reporter', type: 'User' } });
    stack.model!.enqueue(
      { content: [bash('q1', 'sleep 4 && echo first > notes.txt')], stopReason: 'tool_use' },
      text('Wrote notes.txt and took the three comments into account.'),
    );
    const before = stack.model!.requests.length;
    const labelled = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: 1, title: 'Write notes' }, 'stratus', { login: 'maintainer' }),
    );
    await modelCalls(before, 1);
    const payloads = [11, 12, 13].map((id) => mention(1, 'Write notes', id, `@stratus also mention comment ${id} in the notes`));
    const sent = await Promise.all(payloads.map((p) => sendDelivery(stack.apiUrl, SECRET, 'issue_comment', p)));
    const queued = await Promise.all(sent.map((s) => finishedRun(api, s.deliveryId)));
    for (const run of queued) expect(run).toMatchObject({ outcome: 'queued_into_run', trigger: 'mention' });
    // The same delivery again (GitHub's redelivery at the route, a second invocation at the worker) queues nothing more.
    expect((await sendDelivery(stack.apiUrl, SECRET, 'issue_comment', payloads[0], { deliveryId: sent[0]!.deliveryId })).body).toEqual({
      accepted: false,
      reason: 'duplicate delivery',
    });
    const found = triggerFromDelivery('issue_comment', sent[1]!.deliveryId, payloads[1], { label: 'stratus', mention: '@stratus' });
    if (!('trigger' in found)) throw new Error(found.ignored);
    await handleGithubWorkerEvent(stack.deps, { kind: 'github_work', trigger: found.trigger });
    const run = await finishedRun(api, labelled.deliveryId);
    expect(run.outcome).toBe('pr_opened');
    // The second model call carried the three comments, after the tool's result.
    const second = stack.model!.requests[before + 1]!.body;
    const last = JSON.stringify(second.messages.at(-1));
    for (const id of [11, 12, 13]) expect(last).toContain(`mention comment ${id} in the notes`);
    // In the session's log once each, as user messages; no run of their own, no further model call.
    const texts = userTexts(await api.messages(run.sessionId));
    for (const id of [11, 12, 13]) expect(texts.filter((t) => t.includes(`mention comment ${id} in the notes`))).toHaveLength(1);
    expect(stack.model!.requests.length).toBe(before + 2);
    const runs = (await api.request('GET', '/v1/github/runs?limit=200')).json.runs.filter((r: { number: number }) => r.number === 1);
    expect(runs.filter((r: { trigger: string }) => r.trigger === 'queued')).toHaveLength(0);
    expect(gh.reactions.filter((r) => [11, 12, 13].includes(r.commentId))).toEqual(
      expect.arrayContaining([11, 12, 13].map((commentId) => ({ commentId, content: 'eyes' }))),
    );
    expect(gh.reactions.filter((r) => [11, 12, 13].includes(r.commentId))).toHaveLength(3);
    expect(await stack.deps.steers.list('gh:4001#1')).toEqual([]);
    expect(remote.show(run.branch, 'notes.txt')).toBe('first');
    // The push went with an installation token of the App narrowed to this repository (so the repository's workflows run on it), and the PR links its checks.
    const minted = [...gh.tokens.entries()]
      .filter(([, scope]) => scope.repositories?.includes('queue'))
      .map(([t]) => `Basic ${Buffer.from(`x-access-token:${t}`).toString('base64')}`);
    const pushes = git.requests.flatMap((r, i) => (r === 'POST /acme/queue.git/git-receive-pack' ? [git.authorizations[i]] : []));
    expect(pushes.length).toBeGreaterThan(0);
    for (const auth of pushes) expect(minted).toContain(auth);
    const [pr] = gh.pulls('acme/queue');
    expect(pr!.body).toContain(`Checks: ${git.url}/acme/queue/commit/${run.commit}/checks`);
  });

  it('a mention during the last model call gets a run of its own after, continuing the same session', async () => {
    gh.addIssue('acme/queue', 2, { title: 'Explain', body: 'Explain the README', user: { login: 'reporter', type: 'User' } });
    stack.model!.enqueue(
      { ...text('The README is one line; nothing to change.'), delayMs: 2_500 },
      { content: [bash('l1', 'echo "queue: a test repository" > README.md')], stopReason: 'tool_use' },
      text('Rewrote the README as the comment asked.'),
    );
    const before = stack.model!.requests.length;
    const labelled = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issues',
      labeledPayload(repo, { number: 2, title: 'Explain' }, 'stratus', { login: 'maintainer' }),
    );
    await modelCalls(before, 1);
    const late = await sendDelivery(stack.apiUrl, SECRET, 'issue_comment', mention(2, 'Explain', 21, '@stratus please rewrite the README instead'));
    expect((await finishedRun(api, late.deliveryId)).outcome).toBe('queued_into_run');
    const first = await finishedRun(api, labelled.deliveryId);
    expect(first.outcome).toBe('no_changes');
    const own = await until(
      async () =>
        (await api.request('GET', '/v1/github/runs?limit=200')).json.runs.find(
          (r: { trigger: string; number: number; outcome: string }) => r.trigger === 'queued' && r.number === 2 && r.outcome === 'pr_opened',
        ),
      (r) => r !== undefined,
    );
    expect(own).toMatchObject({ sessionId: first.sessionId, sender: 'reviewer', kind: 'issue' });
    expect(remote.show(own.branch, 'README.md')).toBe('queue: a test repository');
    // Its prompt carried the comment, once; nothing else ran it.
    const prompts = (await api.messages(first.sessionId)).filter((m: { kind: string }) => m.kind === 'prompt');
    expect(prompts).toHaveLength(2);
    expect(JSON.stringify(prompts[1])).toContain('please rewrite the README instead');
    expect(userTexts(await api.messages(first.sessionId)).filter((t) => t.includes('please rewrite the README instead'))).toHaveLength(1);
    expect(stack.model!.requests.length).toBe(before + 3);
    expect(await stack.deps.steers.list('gh:4001#2')).toEqual([]);
  });

  it('a comment a dead turn took but never logged is delivered by the next turn, once; one it did log is only cleared', async () => {
    gh.addIssue('acme/queue', 3, { title: 'Recover', body: 'b', user: { login: 'reporter', type: 'User' } });
    const now = Date.now();
    const queue = 'gh:4001#3';
    const steer = (n: number, text: string) => ({
      queueKey: queue,
      steerId: `${new Date(now + n).toISOString()}#d-dead-${n}`,
      tenantId: 'local',
      deliveryId: `d-dead-${n}`,
      author: 'reviewer',
      text,
      createdAt: new Date(now + n).toISOString(),
      trigger: {},
    });
    // A turn took this one, then its process died before the message reached the log.
    expect(await stack.deps.steers.enqueue(steer(1, 'Queued comment: please also add a changelog line.'), now)).toBe(true);
    expect(await stack.deps.steers.take(queue, steer(1, '').steerId, 'turn_dead')).toBe(true);
    stack.model!.enqueue({ content: [bash('r1', 'echo recovered > r.txt')], stopReason: 'tool_use' }, text('Done, with the changelog line.'));
    const before = stack.model!.requests.length;
    const sent = await sendDelivery(stack.apiUrl, SECRET, 'issues', labeledPayload(repo, { number: 3, title: 'Recover' }, 'stratus', { login: 'maintainer' }));
    const run = await finishedRun(api, sent.deliveryId);
    expect(run.outcome).toBe('pr_opened');
    expect(JSON.stringify(stack.model!.requests[before + 1]!.body.messages.at(-1))).toContain('please also add a changelog line');
    expect(userTexts(await api.messages(run.sessionId)).filter((t) => t.includes('please also add a changelog line'))).toHaveLength(1);
    expect(await stack.deps.steers.list(queue)).toEqual([]);
    // Now one a dead turn took whose message did reach the log (the same text): the next turn clears it and sends nothing again.
    expect(await stack.deps.steers.enqueue(steer(2, 'Queued comment: please also add a changelog line.'), now)).toBe(true);
    expect(await stack.deps.steers.take(queue, steer(2, '').steerId, 'turn_dead_2')).toBe(true);
    gh.addComment('acme/queue', 3, { id: 31, body: '@stratus one more pass', login: 'reviewer' });
    stack.model!.enqueue({ content: [bash('r2', 'echo again >> r.txt')], stopReason: 'tool_use' }, text('One more pass done.'));
    const again = await sendDelivery(
      stack.apiUrl,
      SECRET,
      'issue_comment',
      commentPayload(repo, { number: 3, title: 'Recover' }, { id: 31, body: '@stratus one more pass' }, { login: 'reviewer' }),
    );
    expect((await finishedRun(api, again.deliveryId)).outcome).toBe('pr_updated');
    expect(userTexts(await api.messages(run.sessionId)).filter((t) => t.includes('please also add a changelog line'))).toHaveLength(1);
    expect(await stack.deps.steers.list(queue)).toEqual([]);
  });
});
