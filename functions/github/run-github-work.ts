import type { Octokit } from '@octokit/rest';
import { startTurn } from '../turn/turn.ts';
import type { Deps, DepsOf } from '../deps/deps.ts';
import { githubWorkEventSchema } from '../deps/github-dispatch.ts';
import type { GithubRepoAccess } from '../github-api/github-client.ts';
import { isBot, type GithubTrigger } from '../github-api/github-trigger.ts';
import { WorkspaceInputError } from '../runner-client/runner-errors.ts';
import { runOp } from '../runner-client/workspace-client.ts';
import { createSession } from '../session/create-session.ts';
import { ConflictError, errorMessage } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { threadKey, type GithubRepoRecord, type GithubRunRecord, type GithubThreadRecord } from '../stores/github-store.ts';
import type { SessionRecord, TurnSummary } from '../stores/session-store.ts';
import { importIntoWorkspace } from '../workspaces/workspace-ops.ts';
import { progressTexts, runCost, type Cost } from './progress-comment.ts';
import { watchTodos } from './todo-progress.ts';
import { earlierRunOf } from './repeated-delivery.ts';
import { branchName, stripHiddenContent, taskPrompt } from './untrusted-text.ts';
import { traced } from '../shared/tracing.ts';
import { RUNNER_SLOT_WAIT_IN_RUN_MS } from '../runner-client/runner-slot.ts';
import type { PendingApproval } from '../stores/approval-store.ts';
import { planOf } from '../session/plan-approval.ts';
import { decidePlanFromComment, planCommentText, waitingPlan } from './plan-first.ts';
import { answerFollowUp, followUpWork, type FollowUpWork } from './follow-up-work.ts';
import { answerWithoutRun, budgetSpent, itemBudgetLine, itemView, narrowSessionBudgets, recordItemSpend, startItemRun, type ItemRun } from './item-run.ts';
import { OWN_MARK_PREFIX } from './own-activity.ts';
import { overRateLimit } from './rate-limit.ts';
import { decisionOf } from './delivery-decision.ts';
import { afterRun, queueIntoRun, takeOwnQueued } from './queue-into-run.ts';
import { answerOnThread, askOnThread } from './github-questions.ts';

export type GithubWorkDeps = Pick<
  Deps,
  | 'github'
  | 'githubItems'
  | 'githubClients'
  | 'githubItemRates'
  | 'githubDeliveryLog'
  | 'steers'
  | 'githubDispatch'
  | 'sessions'
  | 'messages'
  | 'approvals'
  | 'log'
  | 'clock'
  | 'newId'
> & {
  config: DepsOf<typeof startTurn>['config'] & Pick<Deps['config'], 'github'>;
} & DepsOf<typeof startTurn> &
  DepsOf<typeof createSession> &
  DepsOf<typeof importIntoWorkspace>;

/**
 * How long a run holds its issue without a deadline of its own (the local worker has none); a
 * Lambda worker holds it until its invocation's deadline. Past the hold, the holder is dead and
 * the next trigger takes over.
 */
const UNBOUNDED_HOLD_MS = 2 * 60 * 60_000;
/** Slack after a worker's deadline before its hold is taken over (its last writes may still land). */
const HOLD_MARGIN_MS = 60_000;
/** How long the worker waits for a turn that continued in another invocation. */
const TURN_POLL_MS = 1_000;

/** Turn endings that are not the model finishing its work: the PR is a draft and says so. */
const STOPPED: Record<string, string> = {
  max_turns: 'it used its budget of model calls',
  budget_exceeded: 'it used up a budget',
  interrupted: 'it was interrupted',
  max_tokens: 'the model hit its output limit',
  internal_error: 'an internal error',
  model_error: 'the model API failed',
  crashed: 'its process died',
  aborted: 'it was aborted',
  awaiting_permission: 'a tool call needed an answer nobody gives in an unattended run',
  awaiting_answer: 'the agent asked a question',
};

/**
 * Why a turn stopped early, for the PR and the comment. The per-turn model-call cap is a budget
 * (`maxModelCallsPerTurn`), so a turn that reaches it ends `budget_exceeded` naming it.
 */
function stoppedBecause(summary: TurnSummary): string {
  const reason = summary.stopReason === 'budget_exceeded' && summary.budget === 'maxModelCallsPerTurn' ? STOPPED.max_turns : STOPPED[summary.stopReason];
  return (reason ?? `it ended with "${summary.stopReason}"`) + (summary.error ? `: ${summary.error}` : '');
}

/** The GitHub worker's entry: one accepted webhook trigger, run to a pull request or an explaining comment. */
export async function handleGithubWorkEvent(deps: GithubWorkDeps, event: unknown, deadlineAt?: number): Promise<GithubRunRecord | undefined> {
  const parsed = githubWorkEventSchema.safeParse(event);
  if (!parsed.success) throw new Error(`Not a GitHub work event: ${parsed.error.message.slice(0, 500)}`);
  const { trigger } = parsed.data;
  // The run's span is the parent of its turns' spans: a trace starts from the delivery that caused it.
  const attributes = {
    'stratus.github.delivery_id': trigger.deliveryId,
    'stratus.github.repository': trigger.repository,
    'stratus.github.number': trigger.number,
  };
  try {
    return await traced(deps.tracing, 'github_run', attributes, () => runGithubWork(deps, trigger, deadlineAt));
  } finally {
    await deps.tracing.flush().catch(() => undefined);
  }
}

export async function runGithubWork(deps: GithubWorkDeps, trigger: GithubTrigger, deadlineAt?: number): Promise<GithubRunRecord | undefined> {
  const log = deps.log.child({ deliveryId: trigger.deliveryId, repository: trigger.repository, number: trigger.number });
  const repo = await deps.github.getRepoById(trigger.repositoryId);
  // The webhook route checked the same; a connection removed or moved since then runs nothing.
  if (!repo || (repo.installationId !== undefined && repo.installationId !== trigger.installationId)) {
    log.info('repository disconnected before its delivery ran; nothing done');
    return undefined;
  }
  const { run, save } = runRecorder(deps, trigger, repo);
  // A delivery run before (a duplicate, a redrive) is left alone unless its worker died.
  const earlier = await earlierRunOf(deps, trigger, run, log);
  if (earlier) return earlier;
  await save({});
  const access = await accessFor(deps, trigger, repo, log, save);
  if (!('octokit' in access)) return access;
  const { existing, key } = await itemOf(deps, trigger, repo);
  const answered = await answerWithoutRun(deps, { trigger, repo, gh: access.octokit, threadKey: key, save });
  if (answered) return answered;
  // A queued comment was counted when it arrived; a resumed run goes on with a run that was.
  const limited =
    trigger.trigger === 'queued' || trigger.trigger === 'resumed' ? undefined : await overRateLimit(deps, { itemKey: key, repo, trigger, access, log }, save);
  if (limited) return limited;
  const heldElsewhere = await holdItem(deps, { trigger, key, repo, access, save, log, run, existing, deadlineAt });
  if (heldElsewhere) return heldElsewhere;
  let thread = threadState(existing, repo.tenantId);
  let item: ItemRun | undefined;
  const say = progressComment(access.octokit, trigger, () => itemBudgetLine(item));
  try {
    const begun = await beginItemRun(deps, { trigger, key, repo, access, save, run });
    if ('ended' in begun) return begun.ended;
    item = begun.item;
    await say(texts(deps).queued(trigger.isPullRequest ? 'pull request' : 'issue'));
    await save({ outcome: 'running' });
    const result = await work(deps, { trigger, repo, access, thread, threadKey: key, run, save, say, log, deadlineAt, item });
    thread = result.thread;
    return run;
  } catch (err) {
    log.error('GitHub run failed', { error: errorMessage(err) });
    const reason = failureReason(err);
    await say(texts(deps).failed({ reason, sessionId: run.sessionId })).catch((e: unknown) =>
      log.error('could not post the failure comment', { error: errorMessage(e) }),
    );
    return save({ outcome: 'failed', detail: reason });
  } finally {
    await deps.github.releaseThread(key, run.runId, thread).catch((err: unknown) => log.error('could not release the issue', { error: errorMessage(err) }));
    await afterRun(deps, { key, trigger, runId: run.runId, log }).catch((err: unknown) =>
      log.error('could not hand on the queued comments', { error: errorMessage(err) }),
    );
  }
}

/** The issue's thread as earlier runs left it, and the key it is held under. */
type HoldContext = Omit<Parameters<typeof queueIntoRun>[1], 'runId'> & { run: GithubRunRecord; existing: GithubThreadRecord | undefined; deadlineAt?: number };

/**
 * Holds the issue or PR for this run (until its deadline plus a margin); undefined once held. When
 * another run holds it, a mention is queued into that run, anything else told it is already working.
 */
async function holdItem(deps: GithubWorkDeps, ctx: HoldContext): Promise<GithubRunRecord | undefined> {
  const now = deps.clock();
  const heldUntil = (ctx.deadlineAt ?? now + UNBOUNDED_HOLD_MS) + HOLD_MARGIN_MS;
  if (await deps.github.claimThread(ctx.key, ctx.run.runId, { now, heldUntil, legacyStaleMs: UNBOUNDED_HOLD_MS })) return undefined;
  // Nobody asked on the thread for a resumed run: no comment, the holder publishes the session's work when it ends.
  if (ctx.trigger.trigger === 'resumed') return ctx.save({ outcome: 'already_running', detail: 'Another run held the issue when the turn was resumed.' });
  const queued = await queueIntoRun(deps, { ...ctx, runId: ctx.run.runId });
  return queued ?? alreadyRunning(deps, ctx);
}

/**
 * Before the work starts: a queued run whose comment the working run took ends there, and the
 * item's one budget (over every run on the issue or PR) is counted; spent, a comment instead.
 */
async function beginItemRun(
  deps: GithubWorkDeps,
  ctx: Pick<HoldContext, 'trigger' | 'key' | 'repo' | 'access' | 'save' | 'run'>,
): Promise<{ item: ItemRun } | { ended: GithubRunRecord }> {
  if (!(await takeOwnQueued(deps, ctx.key, ctx.trigger, ctx.run.runId)))
    return { ended: await ctx.save({ outcome: 'queued_into_run', detail: 'The run that was working took the queued comment.' }) };
  const counted = await startItemRun(deps, ctx.repo, ctx.key);
  if ('spent' in counted)
    return { ended: await budgetSpent(ctx.access.octokit, { trigger: ctx.trigger, mention: ctx.repo.mention, spent: counted.spent, save: ctx.save }) };
  return { item: counted };
}

async function itemOf(deps: GithubWorkDeps, trigger: GithubTrigger, repo: GithubRepoRecord): Promise<{ existing?: GithubThreadRecord; key: string }> {
  const found = await deps.github.getThread({ id: trigger.repositoryId, fullName: trigger.repository }, trigger.number);
  // A thread from before ids were recorded, found by name, counts only if it is this tenant's.
  const existing = found && (found.tenantId === undefined || found.tenantId === repo.tenantId) ? found : undefined;
  return { existing, key: existing?.threadKey ?? threadKey(trigger.repositoryId, trigger.number) };
}

/**
 * The answer to a trigger on an issue another run holds: a comment saying so, and the run ended
 * `already_running`. A comment GitHub refuses (rate limit, 5xx, a deleted issue) is noted in the
 * record, which ends all the same: no run stays `queued`.
 */
async function alreadyRunning(
  deps: GithubWorkDeps,
  o: { trigger: GithubTrigger; access: GithubRepoAccess; existing: GithubThreadRecord | undefined; save: SaveRun; log: Logger },
): Promise<GithubRunRecord> {
  const { trigger, existing } = o;
  const body = texts(deps).alreadyRunning(existing?.sessionId);
  const unposted = await o.access.octokit.rest.issues.createComment({ owner: trigger.owner, repo: trigger.name, issue_number: trigger.number, body }).then(
    () => undefined,
    (err: unknown) => (o.log.warn('could not post the "already working" comment', { error: errorMessage(err) }), errorMessage(err)),
  );
  const detail = `Another run was working on this issue.${unposted ? ` The comment saying so could not be posted: ${unposted.slice(0, 500)}` : ''}`;
  return o.save({ outcome: 'already_running', detail, ...(existing?.sessionId ? { sessionId: existing.sessionId } : {}) });
}

type ThreadState = Omit<GithubThreadRecord, 'threadKey' | 'activeRunId' | 'activeSince' | 'heldUntil' | 'aliasOf'>;
type SaveRun = (patch: Partial<GithubRunRecord>) => Promise<GithubRunRecord>;

/** The run's record, and how each step stores what it did. */
function runRecorder(deps: GithubWorkDeps, trigger: GithubTrigger, repo: GithubRepoRecord): { run: GithubRunRecord; save: SaveRun } {
  const now = new Date(deps.clock()).toISOString();
  const run: GithubRunRecord = {
    runId: deps.newId('ghr'),
    tenantId: repo.tenantId,
    createdAt: now,
    updatedAt: now,
    deliveryId: trigger.deliveryId,
    repository: trigger.repository,
    number: trigger.number,
    kind: trigger.isPullRequest ? 'pull_request' : 'issue',
    trigger: trigger.trigger,
    sender: trigger.sender.login,
    outcome: 'queued',
  };
  const save = async (patch: Partial<GithubRunRecord>) => {
    Object.assign(run, patch, { updatedAt: new Date(deps.clock()).toISOString() });
    await deps.github.putRun(run);
    // The delivery log follows the run: what was decided, and the run and session it started.
    await deps.githubDeliveryLog.decide(run.deliveryId, decisionOf(run), deps.clock());
    return run;
  };
  return { run, save };
}

/** GitHub access for the repository, or the run as refused (a bot, a mention without write access) or failed. */
async function accessFor(
  deps: GithubWorkDeps,
  trigger: GithubTrigger,
  repo: GithubRepoRecord,
  log: Logger,
  save: SaveRun,
): Promise<GithubRepoAccess | GithubRunRecord> {
  // A check's sender is whoever pushed (often Stratus's own App); checks start runs only where the repository enabled it.
  if (!repo.allowBots && isBot(trigger.sender) && trigger.trigger !== 'check') {
    log.info('trigger by a bot refused', { sender: trigger.sender.login });
    return save({ outcome: 'refused', detail: `@${trigger.sender.login} is a bot; the repository does not allow bots to start runs.` });
  }
  let access: GithubRepoAccess;
  try {
    access = await deps.githubClients.forRepository(trigger.owner, trigger.name, repo.installationId ?? trigger.installationId);
  } catch (err) {
    log.error('no GitHub access for the repository', { error: errorMessage(err) });
    return save({ outcome: 'failed', detail: `Could not authenticate to GitHub: ${errorMessage(err)}` });
  }
  // A mention, a review and a reply that answers the agent's question each take write access.
  if (
    (trigger.trigger === 'mention' || trigger.trigger === 'review' || trigger.trigger === 'answer') &&
    !(await canWrite(access.octokit, { owner: trigger.owner, repo: trigger.name }, trigger.sender.login))
  ) {
    log.info('mention by a user without write access refused', { sender: trigger.sender.login });
    return save({
      outcome: 'refused',
      detail: `@${trigger.sender.login} cannot write to ${trigger.repository}; only writers, maintainers and admins can ${trigger.trigger === 'answer' ? "answer the agent's questions" : 'start runs'}.`,
    });
  }
  return access;
}

/** What the run carries over from the issue's earlier runs (the claim's own fields are the store's). */
function threadState(existing: GithubThreadRecord | undefined, tenantId: string): ThreadState {
  const thread = { ...(existing ?? {}), tenantId } as Partial<GithubThreadRecord>;
  delete thread.threadKey;
  delete thread.activeRunId;
  delete thread.activeSince;
  delete thread.heldUntil;
  return thread as ThreadState;
}

/** The run's one progress comment: posted first, edited after; with the work item's budget line when it has one. */
function progressComment(gh: Octokit, trigger: GithubTrigger, budgetLine: () => string | undefined): (body: string) => Promise<void> {
  const where = { owner: trigger.owner, repo: trigger.name };
  let commentId: number | undefined;
  return async (text) => {
    const line = budgetLine();
    const body = line ? `${text}\n\n${line}` : text;
    if (commentId === undefined) commentId = (await gh.rest.issues.createComment({ ...where, issue_number: trigger.number, body })).data.id;
    else await gh.rest.issues.updateComment({ ...where, comment_id: commentId, body });
  };
}

interface WorkContext {
  trigger: GithubTrigger;
  repo: GithubRepoRecord;
  access: GithubRepoAccess;
  thread: ThreadState;
  /** The key the issue's thread is held under (a Stratus PR's number is linked to it). */
  threadKey: string;
  run: GithubRunRecord;
  save: SaveRun;
  say: (body: string) => Promise<void>;
  log: Logger;
  deadlineAt?: number;
  /** The repository's clone URL, checked before anything is done with it. */
  cloneUrl?: string;
  /** The run's share of its issue's or PR's one budget. */
  item?: ItemRun;
  /** A review's or failing checks' prompt and what the run answers after its push. */
  followUp?: FollowUpWork;
}

/** How the turn went: the session after it, the run's cost, the model's last words, and why it stopped early (if it did). */
interface TurnOutcome {
  session: SessionRecord;
  cost: Cost;
  modelSummary: string;
  stopped?: string;
  /** A "plan first" run's plan, waiting for a writer's reply: nothing is published yet. */
  plan?: PendingApproval;
  /** The turn waits on the agent's question (an attended run): asked in a comment, nothing published yet. */
  asked: boolean;
}

/** Checkout (or the session of an earlier run), the unattended turn, then commit, push and the PR. */
async function work(deps: GithubWorkDeps, given: WorkContext): Promise<{ thread: ThreadState }> {
  const ctx = { ...given, cloneUrl: checkedCloneUrl(given.trigger.cloneUrl) };
  const { session, thread } = await sessionFor(deps, ctx);
  // Its turns find the item's queued comments from the session.
  await deps.steers.bindSession(session.sessionId, ctx.threadKey);
  const branch = thread.branch!;
  await ctx.save({ sessionId: session.sessionId, branch });
  if (ctx.trigger.trigger === 'answer') {
    const refused = await takeAnswer(deps, { ...ctx, thread });
    if (refused) return refused;
  }
  await ctx.say(texts(deps).working(session.sessionId, branch));
  if (ctx.item) await narrowSessionBudgets(deps, ctx.repo, ctx.item, session);
  const followUp = await followUpWork(ctx.access.octokit, ctx.trigger, branch);
  const outcome = await runTheTurn(deps, { ...ctx, followUp }, session, branch);
  if (ctx.item) {
    await recordItemSpend(deps, ctx.item, outcome.cost);
    await ctx.save({ item: itemView(ctx.item) });
  }
  // The trigger is kept: a wait closed outside GitHub goes on with it (resumed-run.ts).
  const settled = { ...thread, waitingQuestion: undefined, lastTrigger: ctx.trigger };
  if (outcome.plan) {
    await askForPlanApproval(deps, ctx, outcome.plan, session.sessionId);
    return { thread: settled };
  }
  if (outcome.asked) return askAndWait(deps, { ...ctx, thread: settled }, outcome);
  return publish(deps, { ...ctx, thread: settled, followUp }, outcome, branch);
}

/**
 * A reply to the question the thread waits on: answered, the turn resumes (undefined here); a
 * reply that is no answer is told why and the question waits on; one that came too late is told so.
 */
async function takeAnswer(deps: GithubWorkDeps, ctx: WorkContext): Promise<{ thread: ThreadState } | undefined> {
  const waiting = ctx.thread.waitingQuestion;
  const gone = { thread: { ...ctx.thread, waitingQuestion: undefined } };
  if (!waiting) {
    // Another reply took the question between the webhook and this run.
    await ctx.save({ outcome: 'refused', detail: 'The question no longer waited for an answer.' });
    return gone;
  }
  const taken = await answerOnThread(deps, { octokit: ctx.access.octokit, trigger: ctx.trigger, mention: ctx.repo.mention, waiting });
  if ('answered' in taken) return undefined;
  const body = 'unclear' in taken ? texts(deps).answerUnclear(taken.unclear) : texts(deps).answerTooLate(waiting.sessionId);
  const { owner, name, number } = ctx.trigger;
  await ctx.access.octokit.rest.issues.createComment({ owner, repo: name, issue_number: number, body });
  if ('unclear' in taken) {
    await ctx.save({ outcome: 'awaiting_answer', detail: `The reply was no answer: ${taken.unclear}`.slice(0, 2_000) });
    return { thread: ctx.thread };
  }
  await ctx.save({ outcome: 'refused', detail: 'The question no longer waited for an answer.' });
  return gone;
}

/** The turn waits on the agent's question: it is posted as a comment, and the next writer's reply goes on with the run. */
async function askAndWait(deps: GithubWorkDeps, ctx: WorkContext, outcome: TurnOutcome): Promise<{ thread: ThreadState }> {
  const sessionId = outcome.session.sessionId;
  const session = `\`${sessionId}\``;
  const asked = await askOnThread(deps, { octokit: ctx.access.octokit, trigger: ctx.trigger, sessionId, session });
  if (!asked) return publish(deps, ctx, { ...outcome, asked: false, stopped: STOPPED.awaiting_permission }, ctx.thread.branch!);
  await ctx.say(texts(deps).asked(sessionId, asked.url));
  await ctx.save({
    outcome: 'awaiting_answer',
    cost: outcome.cost,
    detail: `The agent asked a question (${asked.url}); a writer's reply goes on with the run.`,
  });
  const { url: _url, ...waitingQuestion } = asked;
  return { thread: { ...ctx.thread, waitingQuestion } };
}

/** A follow-up continues the thread's session and branch; a first run gets a new session with the repository checked out on a new branch. */
async function sessionFor(deps: GithubWorkDeps, ctx: WorkContext): Promise<{ session: SessionRecord; thread: ThreadState }> {
  const { trigger, repo, access, thread } = ctx;
  // A follow-up: the same session and branch; new commits go on top of the last push.
  if (thread.sessionId && thread.branch && thread.headSha) return { session: await deps.sessions.getForTenant(thread.sessionId, repo.tenantId), thread };
  let ref = trigger.defaultBranch;
  let baseBranch = trigger.defaultBranch;
  if (trigger.isPullRequest) {
    // Fork PRs too: the base repository carries every PR's head as refs/pull/N/head.
    const pr = (await access.octokit.rest.pulls.get({ owner: trigger.owner, repo: trigger.name, pull_number: trigger.number })).data;
    ref = `refs/pull/${trigger.number}/head`;
    baseBranch = pr.base.ref;
  }
  const branch = branchName(trigger.number, trigger.title);
  const session = await createRunSession(deps, trigger, repo, baseBranch);
  await ctx.save({ sessionId: session.sessionId, branch });
  const checkout = await importIntoWorkspace(deps, session, { type: 'git_checkout', url: ctx.cloneUrl!, ref, branch, depth: 1, token: access.token });
  return {
    session: await deps.sessions.getForTenant(session.sessionId, repo.tenantId),
    thread: { ...thread, sessionId: session.sessionId, branch, baseBranch, headSha: checkout.result.sha },
  };
}

/** An unattended session with the repository's permission settings and budgets, linked to its issue. */
function createRunSession(deps: GithubWorkDeps, trigger: GithubTrigger, repo: GithubRepoRecord, baseBranch: string): Promise<SessionRecord> {
  // Every repository setting but the budgets, the instructions and the GitHub-only ones is a session setting of the same name.
  const {
    budgets,
    instructions,
    planFirst,
    reviews: _reviews,
    failingChecks: _checks,
    followThrough: _followThrough,
    ...sessionSettings
  } = repo.settings ?? {};
  return createSession(deps, {
    tenantId: repo.tenantId,
    title: `${trigger.repository}#${trigger.number}: ${trigger.title}`.slice(0, 200),
    // "Plan first": the session starts in plan mode, and its plan waits for a writer's reply.
    settings: { unattended: true, ...sessionSettings, ...(planFirst ? { permissionMode: 'plan' as const, planFirst: true } : {}) },
    // The repository's budgets bound the run's session; a run stopped by one keeps its work (a draft PR).
    ...(budgets ? { budgets } : {}),
    // Copied at creation: a follow-up run on the same thread keeps the instructions its session started with.
    ...(instructions ? { repositoryInstructions: { repository: trigger.repository, text: instructions } } : {}),
    baseBranch,
    source: {
      kind: 'github',
      repository: trigger.repository,
      number: trigger.number,
      type: trigger.isPullRequest ? 'pull_request' : 'issue',
      url: `${webRoot(trigger.cloneUrl)}/${trigger.isPullRequest ? 'pull' : 'issues'}/${trigger.number}`,
    },
  });
}

/** The issue as the prompt, run to its end (across continuations). */
async function runTheTurn(deps: GithubWorkDeps, ctx: WorkContext, session: SessionRecord, branch: string): Promise<TurnOutcome> {
  const { trigger, repo } = ctx;
  // An answer resumes the waiting turn, and a resumed run follows the turn resumed elsewhere: no new prompt.
  const continues = trigger.trigger === 'answer' || trigger.trigger === 'resumed';
  const prompt = continues ? '' : (ctx.followUp?.prompt ?? taskPrompt(await issueText(ctx.access.octokit, trigger, branch)));
  const usageBefore = { ...session.usage };
  // The progress comment shows the agent's task list as it changes, until the turn ends.
  const todos = watchTodos(
    () => deps.sessions.getForTenant(session.sessionId, repo.tenantId),
    (list) => ctx.say(texts(deps).working(session.sessionId, branch, list)),
    { onError: (err) => ctx.log.warn('could not show the task list in the progress comment', { error: errorMessage(err) }) },
  );
  let summary: TurnSummary;
  try {
    const done =
      trigger.trigger === 'answer'
        ? (await startTurn(deps, { sessionId: session.sessionId, tenantId: repo.tenantId, deadlineAt: ctx.deadlineAt, resume: true })).done
        : trigger.trigger === 'resumed'
          ? followedTurn(deps, session.sessionId, repo.tenantId)
          : startRunTurn(deps, ctx, session.sessionId, prompt);
    summary = await waitForTurnEnd(deps, session.sessionId, repo.tenantId, await done, ctx.deadlineAt);
  } finally {
    await todos.stop();
  }
  const after = await deps.sessions.getForTenant(session.sessionId, repo.tenantId);
  const plan = summary.stopReason === 'awaiting_permission' ? await waitingPlan(deps, session.sessionId) : undefined;
  const stopped = summary.stopReason === 'end_turn' ? undefined : stoppedBecause(summary);
  ctx.log.info('GitHub run turn ended', { sessionId: session.sessionId, stopReason: summary.stopReason });
  const modelSummary = await lastAssistantText(deps, session.sessionId, summary.turnId);
  return {
    session: after,
    cost: runCost(usageBefore, after.usage),
    modelSummary,
    stopped,
    ...(plan ? { plan } : {}),
    asked: summary.stopReason === 'awaiting_answer',
  };
}

/** The issue as a new prompt; or, when the session waits on its plan, the writer's reply decides it and the turn resumes. */
async function startRunTurn(deps: GithubWorkDeps, ctx: WorkContext, sessionId: string, prompt: string): Promise<TurnSummary> {
  const { repo } = ctx;
  const plan = await waitingPlan(deps, sessionId);
  if (!plan) return (await startTurn(deps, { sessionId, tenantId: repo.tenantId, prompt, deadlineAt: ctx.deadlineAt })).done;
  const mode = repo.settings?.permissionMode ?? deps.config.permissions.defaultMode;
  await decidePlanFromComment(deps, { gh: ctx.access.octokit, trigger: ctx.trigger, mention: repo.mention, mode, plan });
  try {
    return await (await startTurn(deps, { sessionId, tenantId: repo.tenantId, resume: true, deadlineAt: ctx.deadlineAt })).done;
  } catch (err) {
    // A decided plan is resumed by whoever comes first (the local scheduler's sweep too): follow that turn.
    if (!(err instanceof ConflictError)) throw err;
    return followedTurn(deps, sessionId, repo.tenantId, err);
  }
}

/**
 * The session's turn that someone else resumed: running (a checkpoint summary, which
 * waitForTurnEnd follows to its end) or ended. With no turn at all, `otherwise` is thrown.
 */
async function followedTurn(deps: GithubWorkDeps, sessionId: string, tenantId: string, otherwise?: unknown): Promise<TurnSummary> {
  const session = await deps.sessions.getForTenant(sessionId, tenantId);
  const now = new Date(deps.clock()).toISOString();
  if (session.lease) return { turnId: session.lease.turnId, stopReason: 'checkpoint', startedAt: now, endedAt: now };
  if (session.lastTurn) return session.lastTurn;
  throw otherwise ?? new Error(`Session ${sessionId} has no turn to follow.`);
}

/** A "plan first" run stops at its plan: the plan as a comment a writer answers, the progress comment saying so. */
async function askForPlanApproval(deps: GithubWorkDeps, ctx: WorkContext, plan: PendingApproval, sessionId: string): Promise<void> {
  const { trigger } = ctx;
  const body = planCommentText(planOf(plan), ctx.repo.mention, sessionId);
  await ctx.access.octokit.rest.issues.createComment({ owner: trigger.owner, repo: trigger.name, issue_number: trigger.number, body });
  await ctx.say(texts(deps).awaitingPlan(sessionId));
  await ctx.save({ outcome: 'awaiting_plan', detail: 'The plan waits for a writer to approve or reject it by a reply comment.' });
}

/** The turn's workspace committed and pushed to the run's branch by the runner's git (git_publish). */
async function pushWork(deps: GithubWorkDeps, ctx: WorkContext, session: SessionRecord, branch: string) {
  const { trigger } = ctx;
  const what = trigger.isPullRequest ? `pull request #${trigger.number}` : `#${trigger.number}`;
  const published = await runOp(
    deps,
    { sessionId: session.sessionId, workspace: session.workspace, tenantId: session.tenantId, waitForRunnerSlotMs: RUNNER_SLOT_WAIT_IN_RUN_MS },
    {
      type: 'git_publish',
      url: ctx.cloneUrl!,
      base: ctx.thread.headSha!,
      branch,
      message: `${trigger.title.slice(0, 60)} (${what})\n\nMade by Stratus in session ${session.sessionId}${ctx.thread.pullRequest ? ', a follow-up' : ''}.`,
      author: deps.config.github.commitAuthor,
      token: ctx.access.token,
    },
  );
  return published.result;
}

/** Commits and pushes the workspace's changes, then updates the thread's PR or opens one (a draft when the turn stopped early). */
async function publish(deps: GithubWorkDeps, ctx: WorkContext, outcome: TurnOutcome, branch: string): Promise<{ thread: ThreadState }> {
  const { trigger, say, save } = ctx;
  const { session, cost, modelSummary, stopped } = outcome;
  const pub = await pushWork(deps, ctx, session, branch);
  // A review's threads are answered before the run's outcome is recorded: whoever reads a finished run finds its replies.
  const answerThreads = (commit?: string) => answerFollowUp(ctx.access.octokit, { trigger, work: ctx.followUp, summary: modelSummary, commit, log: ctx.log });
  if (!pub.changed) {
    await answerThreads();
    await say(texts(deps).noChanges({ summary: modelSummary, cost, sessionId: session.sessionId, stopped, setup: session.setup }));
    await save({ outcome: 'no_changes', cost, detail: stopped ? `Stopped early: ${stopped}` : 'The run changed nothing.' });
    return { thread: ctx.thread };
  }
  if (!pub.pushed) {
    await say(texts(deps).pushRejected({ branch, error: pub.error, sessionId: session.sessionId }));
    await save({ outcome: 'push_rejected', cost, detail: pub.error.slice(0, 2_000) });
    return { thread: ctx.thread };
  }
  // The branch is on GitHub now: only from here on is any link to it posted.
  const thread = { ...ctx.thread, headSha: pub.sha };
  if (thread.pullRequest) {
    await say(
      texts(deps).updated({
        url: thread.pullRequest.url,
        sha: pub.sha,
        summary: modelSummary,
        cost,
        sessionId: session.sessionId,
        stopped,
        setup: session.setup,
      }),
    );
    await answerThreads(pub.sha);
    await save({ outcome: 'pr_updated', commit: pub.sha, cost, pullRequestUrl: thread.pullRequest.url });
    return { thread };
  }
  return openPullRequest(deps, { ...ctx, thread }, outcome, { branch, sha: pub.sha, files: pub.files });
}

/** The pull request for a first push: a draft, saying why, when the turn stopped early. */
async function openPullRequest(
  deps: GithubWorkDeps,
  ctx: WorkContext,
  outcome: TurnOutcome,
  pushed: { branch: string; sha: string; files: string[] },
): Promise<{ thread: ThreadState }> {
  const { trigger } = ctx;
  const { cost, modelSummary: summary, stopped } = outcome;
  const sessionId = outcome.session.sessionId;
  const draft = stopped !== undefined;
  const pr = (
    await ctx.access.octokit.rest.pulls.create({
      owner: trigger.owner,
      repo: trigger.name,
      head: pushed.branch,
      base: ctx.thread.baseBranch ?? trigger.defaultBranch,
      draft,
      title: `${draft ? '[WIP] ' : ''}${trigger.title}`.slice(0, 250),
      body: prBody({ trigger, summary, cost, sessionId, stopped, files: pushed.files, sha: pushed.sha }),
    })
  ).data;
  const thread = { ...ctx.thread, pullRequest: { number: pr.number, url: pr.html_url } };
  await deps.github.linkPullRequest(trigger.repositoryId, pr.number, ctx.threadKey);
  await ctx.say(texts(deps).opened({ url: pr.html_url, draft, summary, cost, sessionId, stopped, setup: outcome.session.setup }));
  await ctx.save({ outcome: draft ? 'draft_pr_opened' : 'pr_opened', commit: pushed.sha, cost, pullRequestUrl: pr.html_url });
  return { thread };
}

function prBody(o: { trigger: GithubTrigger; summary: string; cost: Cost; sessionId: string; stopped?: string; files: string[]; sha: string }): string {
  const link = o.trigger.isPullRequest ? `Follows up on #${o.trigger.number}.` : `Fixes #${o.trigger.number}`;
  return [
    link,
    '',
    o.summary.trim() || '(The model wrote no summary.)',
    ...(o.stopped ? ['', `**Draft:** the run stopped before it finished (${o.stopped}). This is the work so far; mention me here to continue.`] : []),
    '',
    `Files: ${o.files
      .slice(0, 50)
      .map((f) => `\`${f}\``)
      .join(', ')}${o.files.length > 50 ? ` and ${o.files.length - 50} more` : ''}`,
    '',
    // Pushed with the App's installation token, so the repository's workflows run on it (docs/deploy.md, "Pushes that run CI").
    `Checks: ${checksUrl(o.trigger.cloneUrl, o.sha)}`,
    '',
    `Made by Stratus in session \`${o.sessionId}\`. Cost: about $${o.cost.usd.toFixed(4)} (${o.cost.inputTokens} input + ${o.cost.outputTokens} output tokens).`,
  ].join('\n');
}

/** Writers, maintainers and admins may start runs (GitHub's `permission` folds maintain into write). */
async function canWrite(gh: Octokit, where: { owner: string; repo: string }, username: string): Promise<boolean> {
  try {
    const { data } = await gh.rest.repos.getCollaboratorPermissionLevel({ ...where, username });
    return ['admin', 'maintain', 'write'].includes(data.permission) || ['admin', 'maintain', 'write'].includes(data.role_name ?? '');
  } catch (err) {
    if ((err as { status?: number }).status === 404) return false;
    throw err;
  }
}

/** The issue or PR and its comments, read through the REST API (the payload may be stale or cut). */
async function issueText(gh: Octokit, trigger: GithubTrigger, branch: string) {
  const where = { owner: trigger.owner, repo: trigger.name, issue_number: trigger.number };
  const issue = (await gh.rest.issues.get(where)).data;
  const comments = await gh.paginate(gh.rest.issues.listComments, { ...where, per_page: 100 });
  const human = comments.filter((c) => !c.body?.includes(OWN_MARK_PREFIX) && c.user?.type !== 'Bot');
  // The comment that asked (it may be past the comments listed, or not listed yet).
  const request =
    trigger.commentId !== undefined
      ? (await gh.rest.issues.getComment({ owner: trigger.owner, repo: trigger.name, comment_id: trigger.commentId })).data
      : undefined;
  return {
    repository: trigger.repository,
    number: trigger.number,
    kind: trigger.isPullRequest ? ('pull_request' as const) : ('issue' as const),
    title: issue.title,
    author: issue.user?.login ?? 'unknown',
    body: issue.body ?? '',
    comments: human.slice(-30).map((c) => ({ author: c.user?.login ?? 'unknown', body: c.body ?? '' })),
    branch,
    ...(request ? { request: { author: request.user?.login ?? 'unknown', body: request.body ?? '' } } : {}),
  };
}

/** A turn that checkpointed carries on in another invocation: wait for its end in the session record. */
async function waitForTurnEnd(deps: GithubWorkDeps, sessionId: string, tenantId: string, first: TurnSummary, deadlineAt?: number): Promise<TurnSummary> {
  let summary = first;
  while (summary.stopReason === 'checkpoint') {
    if (deadlineAt !== undefined && deps.clock() > deadlineAt - 30_000) {
      return { ...summary, stopReason: 'internal_error', error: 'the turn outlasted the GitHub worker' };
    }
    await new Promise((resolve) => setTimeout(resolve, TURN_POLL_MS));
    const session = await deps.sessions.getForTenant(sessionId, tenantId);
    if (session.lastTurn?.turnId === first.turnId && session.lastTurn.stopReason !== 'checkpoint' && !session.lease) summary = session.lastTurn;
  }
  return summary;
}

async function lastAssistantText(deps: GithubWorkDeps, sessionId: string, turnId: string): Promise<string> {
  const messages = await deps.messages.loadFrom(sessionId);
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.turnId !== turnId || m.kind !== 'assistant') continue;
    const text = m.content
      .map((b) => (b.type === 'text' ? b.text : ''))
      .join('\n')
      .trim();
    if (text) return stripHiddenContent(text);
  }
  return '';
}

/** https:// clone URLs, or http:// for a git server on loopback (tests, the local demo). */
function checkedCloneUrl(cloneUrl: string): string {
  const url = new URL(cloneUrl);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) return url.toString();
  throw new WorkspaceInputError(`the repository's clone URL ${url.protocol}//${url.host} is not https:// (plain http:// is accepted only on loopback).`);
}

/** The checks GitHub shows for a pushed commit (the workflows and check runs the push started). */
function checksUrl(cloneUrl: string, sha: string): string {
  return `${webRoot(cloneUrl)}/commit/${sha}/checks`;
}

/** github.com/owner/name from its clone URL (https://github.com/owner/name.git). */
function webRoot(cloneUrl: string): string {
  return cloneUrl.replace(/\.git$/, '');
}

function failureReason(err: unknown): string {
  const status = (err as { status?: number }).status;
  if (status !== undefined) return `GitHub answered ${status} to a request (${errorMessage(err).slice(0, 300)}).`;
  return errorMessage(err).slice(0, 1_000);
}

/** The comment texts, with session ids linked to the console when its address is configured. */
const texts = (deps: GithubWorkDeps) => progressTexts(deps.config.github.consoleUrl);
