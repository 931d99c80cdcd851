/**
 * The second half of `npm run demo:github`: after the pull request, a review comment answered
 * in its thread, then a failing check fixed, each through a signed delivery of the real payload.
 */
import { execFileSync } from 'node:child_process';
import type { LocalStack } from '../local/stack.ts';
import type { GithubApiServer } from '../test/support/github-api-server.ts';
import { sendDelivery, type makeBareRepo, type RepoRef } from '../test/support/github-fixture.ts';
import { checksCompletedPayload, reviewCommentPayload } from '../test/support/github-pr-payloads.ts';

export interface DemoContext {
  stack: LocalStack;
  gh: GithubApiServer;
  repo: ReturnType<typeof makeBareRepo>;
  ref: RepoRef;
  secret: string;
  pr: { number: number; title: string; branch: string };
  say: (line?: string) => void;
}

/** The run a delivery started, once it ended. */
async function runOf(ctx: DemoContext, deliveryId: string): Promise<Record<string, unknown>> {
  const started = Date.now();
  for (;;) {
    const res = await fetch(`${ctx.stack.apiUrl}/v1/github/runs`, { headers: { authorization: `Bearer ${ctx.stack.token}` } });
    const found = ((await res.json()) as { runs: Record<string, unknown>[] }).runs.find((r) => r.deliveryId === deliveryId);
    if (found && !['queued', 'running'].includes(String(found.outcome))) return found;
    if (Date.now() - started > 120_000) throw new Error('the run did not finish within 2 minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
}

function showCommit(ctx: DemoContext, head: string): void {
  ctx.say(execFileSync('git', ['--git-dir', ctx.repo.dir, 'show', '--stat', '--patch', '--format=%h %an: %s', head], { encoding: 'utf8' }));
}

/** A reviewer asks, on a line of the diff, for a comment; Stratus edits, pushes and answers in that thread. */
export async function showReviewAnswered(ctx: DemoContext): Promise<void> {
  const comment = { id: 1_001, path: 'add.js', line: 1, diffHunk: '@@ -1 +1 @@\n-module.exports = (a, b) => a - b;\n+module.exports = (a, b) => a + b;' };
  const body = '@stratus please say what this function does, in a comment above it';
  ctx.gh.addReviewComment(ctx.ref.fullName, ctx.pr.number, { ...comment, body, login: 'maintainer' });
  ctx.stack.model!.enqueue(
    {
      content: [
        {
          type: 'tool_use',
          name: 'Edit',
          input: { file_path: '/workspace/add.js', old_string: 'module.exports', new_string: '// Adds two numbers.\nmodule.exports' },
        },
      ],
      stopReason: 'tool_use',
    },
    { content: [{ type: 'text', text: 'Documented add().\n[comment 1001] Added `// Adds two numbers.` above add().' }], stopReason: 'end_turn' },
  );
  const sent = await sendDelivery(
    ctx.stack.apiUrl,
    ctx.secret,
    'pull_request_review_comment',
    reviewCommentPayload(ctx.ref, ctx.pr, { ...comment, body }, { login: 'maintainer' }),
  );
  ctx.say(`\n== a review comment on add.js line 1: "${body}"`);
  ctx.say(`POST /v1/github/webhook (pull_request_review_comment.created, signed) → ${sent.status}`);
  const run = await runOf(ctx, sent.deliveryId);
  ctx.say(`run: ${run.outcome} (trigger ${run.trigger}, the same session ${run.sessionId})`);
  showCommit(ctx, ctx.pr.branch);
  ctx.say(`== the reply in the review thread of comment ${comment.id}`);
  for (const reply of ctx.gh.repliesTo(comment.id)) ctx.say(`${reply.user.login}: ${reply.body}`);
}

/** CI fails on the new head; Stratus reads the check's output and job log, fixes it and pushes. */
export async function showFailingCheckFixed(ctx: DemoContext): Promise<void> {
  const sha = ctx.repo.rev(ctx.pr.branch)!;
  const log = [
    'Run node docs-check.js',
    'README.md: add() is not documented (expected a line starting "`add(a, b)`")',
    'Error: Process completed with exit code 1.',
  ].join('\n');
  ctx.gh.addCheckRun(ctx.ref.fullName, sha, {
    id: 9_001,
    name: 'docs',
    conclusion: 'failure',
    output: { title: 'README check failed', summary: 'add() is not documented' },
    log,
  });
  ctx.stack.model!.enqueue(
    {
      content: [
        { type: 'tool_use', name: 'Bash', input: { command: "printf '\\n`add(a, b)` returns a + b.\\n' >> README.md", description: 'Document add()' } },
      ],
      stopReason: 'tool_use',
    },
    { content: [{ type: 'text', text: 'The docs check failed: README.md did not document add(). Added the line it expects.' }], stopReason: 'end_turn' },
  );
  const payload = checksCompletedPayload(ctx.ref, 'check_suite', { number: ctx.pr.number, sha, branch: ctx.pr.branch, conclusion: 'failure' });
  const sent = await sendDelivery(ctx.stack.apiUrl, ctx.secret, 'check_suite', payload);
  ctx.say(`\n== CI: the check "docs" failed on ${sha.slice(0, 12)}`);
  ctx.say(`POST /v1/github/webhook (check_suite.completed, conclusion failure, signed) → ${sent.status}`);
  const run = await runOf(ctx, sent.deliveryId);
  ctx.say(`run: ${run.outcome} (trigger ${run.trigger}; at most 2 attempts per PR)`);
  showCommit(ctx, ctx.pr.branch);
  ctx.say(`== the summary comment on pull request #${ctx.pr.number}`);
  ctx.say(ctx.gh.commentsOn(ctx.ref.fullName, ctx.pr.number).at(-1)?.body ?? '(none)');
}
