/**
 * The texts of the one progress comment a run keeps up to date on its issue or pull request
 * (queued → working → outcome), and of the few other comments it may leave. Every outcome says
 * what happened in words a maintainer can act on; none is a bare "something went wrong".
 */
import { roundUsd } from '../model/pricing.ts';
import type { UsageRecord } from '../stores/budgets.ts';
import type { SetupRecord } from '../stores/setup-record.ts';
import { setupSummaryForComment } from '../environments/setup-report.ts';
import type { TodoItem } from '../stores/session-store.ts';
import { todoMarkdown } from './todo-progress.ts';

const MARK = '<!-- stratus-progress -->';

export interface Cost {
  inputTokens: number;
  outputTokens: number;
  usd: number;
}

/**
 * What one run spent: the session's usage after the run minus before it. The dollars are the
 * session's priced usage (the model price table, cache reads and writes included; docs/turns.md).
 */
export function runCost(before: UsageRecord, after: UsageRecord): Cost {
  const usd = (after.costUsd ?? 0) - (before.costUsd ?? 0);
  return {
    inputTokens:
      after.inputTokens -
      before.inputTokens +
      (after.cacheReadInputTokens ?? 0) -
      (before.cacheReadInputTokens ?? 0) +
      (after.cacheCreationInputTokens ?? 0) -
      (before.cacheCreationInputTokens ?? 0),
    outputTokens: after.outputTokens - before.outputTokens,
    usd: roundUsd(usd),
  };
}

function costLine(cost: Cost): string {
  return `Cost: about $${cost.usd.toFixed(4)} (${cost.inputTokens} input + ${cost.outputTokens} output tokens).`;
}

/**
 * The comment texts of one deployment. With `consoleUrl` (the web console's address, e.g.
 * `https://stratus.example.com/console/`) every session id links to that session's console page,
 * so a maintainer goes from the issue to the live run in one click; without it the id is plain.
 */
export function progressTexts(consoleUrl?: string) {
  const session = (id: string) => (consoleUrl ? `[\`${id}\`](${consoleUrl}#/sessions/${encodeURIComponent(id)})` : `\`${id}\``);
  /** A finished run's comment: what happened, the model's summary quoted, and what the run cost. */
  const outcome = (head: string[], o: { summary: string; cost: Cost; sessionId: string; setup?: SetupRecord }) =>
    [MARK, ...head, ...setupSummaryForComment(o.setup), '', quote(o.summary), '', `${costLine(o.cost)} Session ${session(o.sessionId)}.`].join('\n');
  return {
    queued: (what: string) => `${MARK}\n⏳ **Stratus** is queued to work on this ${what}.`,
    working: (sessionId: string, branch: string, todos: readonly TodoItem[] = []) => workingText(session(sessionId), branch, todos),
    opened: (o: { url: string; draft: boolean; summary: string; cost: Cost; sessionId: string; stopped?: string; setup?: SetupRecord }) =>
      outcome(
        [
          o.draft ? `📝 **Stratus** opened a draft pull request with the work so far: ${o.url}` : `✅ **Stratus** opened a pull request: ${o.url}`,
          ...(o.stopped
            ? ['', `The run stopped before it finished (${o.stopped}); the draft keeps what it did. Mention me on the pull request to continue.`]
            : []),
        ],
        o,
      ),
    updated: (o: { url: string; sha: string; summary: string; cost: Cost; sessionId: string; stopped?: string; setup?: SetupRecord }) =>
      outcome(
        [
          `✅ **Stratus** pushed ${o.sha.slice(0, 12)} to ${o.url}`,
          ...(o.stopped ? ['', `The run stopped before it finished (${o.stopped}); the commit keeps what it did.`] : []),
        ],
        o,
      ),
    noChanges: (o: { summary: string; cost: Cost; sessionId: string; stopped?: string; setup?: SetupRecord }) =>
      outcome(
        ['💬 **Stratus** made no change to the repository, so there is no pull request.', ...(o.stopped ? [`The run stopped early: ${o.stopped}.`] : [])],
        { ...o, summary: o.summary || 'The model gave no reason.' },
      ),
    pushRejected: (o: { branch: string; error: string; sessionId: string }) =>
      [
        MARK,
        `⚠️ **Stratus** made changes but could not push the branch \`${o.branch}\`, so there is no pull request. GitHub answered:`,
        '',
        '```',
        o.error.slice(0, 2_000),
        '```',
        '',
        `Check the branch protection rules and that the GitHub App may write to this repository. The work is kept in session ${session(o.sessionId)}; mention me to try again.`,
      ].join('\n'),
    failed: (o: { reason: string; sessionId?: string }) =>
      [MARK, `❌ **Stratus** could not finish: ${o.reason}`, ...(o.sessionId ? ['', `Session ${session(o.sessionId)} has the details.`] : [])].join('\n'),
    awaitingPlan: (sessionId: string) =>
      `${MARK}\n📋 **Stratus** wrote a plan (below) in session ${session(sessionId)} and waits for a writer to approve or reject it before changing anything.`,
    alreadyRunning: (sessionId: string | undefined) =>
      `👀 **Stratus** is already working on this${sessionId ? ` (session ${session(sessionId)})` : ''}; this request does not start a second run. Mention me again once it has finished.`,
  };
}

/** The comment while the run works: where, and the agent's task list once it keeps one. */
function workingText(session: string, branch: string, todos: readonly TodoItem[]): string {
  return [
    `${MARK}\n🔧 **Stratus** is working on this in session ${session} on branch \`${branch}\`.`,
    ...(todos.length > 0 ? ['', '**Task list**', '', todoMarkdown(todos)] : []),
  ].join('\n');
}

function quote(text: string): string {
  return text
    .trim()
    .slice(0, 5_000)
    .split('\n')
    .map((l) => `> ${l}`)
    .join('\n');
}
