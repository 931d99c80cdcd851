import { roundUsd } from '../model/pricing.ts';
import { mcpServersView } from '../session-settings/mcp-config.ts';
import { denialSummary } from '../permissions/denial-tracking.ts';
import type { StoredMessage } from '../stores/message-store.ts';
import { leaseIsDead, type SessionRecord } from '../stores/session-store.ts';
import { budgetView } from '../agent/budget.ts';
import { waitsForPerson, type PendingApproval } from '../stores/approval-store.ts';
import { questionsOf } from './answer-question.ts';
import { planView } from './plan-approval.ts';
import { budgetsFor, type BudgetConfig } from '../agent/turn-stop.ts';

/** A waiting AskUserQuestion call as the API shows it. */
export function pendingQuestionView(p: PendingApproval) {
  return { toolUseId: p.toolUseId, turnId: p.turnId, questions: questionsOf(p), createdAt: p.createdAt, expiresAt: p.expiresAt ?? p.createdAt };
}

/** What waits for a person's input: the agent's questions and its plans. */
function waitingView(waiting: readonly PendingApproval[]) {
  return {
    questions: waiting.filter((p) => p.kind === 'question' && waitsForPerson(p)).map(pendingQuestionView),
    plans: waiting.filter((p) => p.kind === 'plan' && waitsForPerson(p)).map(planView),
  };
}

/**
 * The public shape of a session: no lease internals, no tenant id. With the config, its budgets
 * (limit, spent, left); with what waits for a person, its questions and plans.
 */
export function sessionView(record: SessionRecord, now: number, config?: BudgetConfig, waiting?: readonly PendingApproval[]) {
  const running = record.lease !== undefined && !leaseIsDead(record.lease, now);
  const turnSpend = running && record.turnSpend?.turnId === record.lease!.turnId ? record.turnSpend : undefined;
  return {
    id: record.sessionId,
    title: record.title || null,
    // Readers free a dead holder's session first (idle, last turn `crashed`); 'interrupted' is
    // what a dead lease that nobody could free yet looks like. The next turn repairs the log.
    status: running ? 'running' : record.status === 'running' ? 'interrupted' : record.status,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    messageCount: record.messageCount,
    turnCount: record.turnCount,
    cwd: record.cwd,
    workspace: { id: record.workspace.id, version: record.workspace.version },
    // Sessions written before costs were rounded on write may carry float noise: round them here too.
    usage: { cacheReadInputTokens: 0, cacheCreationInputTokens: 0, ...record.usage, costUsd: roundUsd(record.usage?.costUsd ?? 0) },
    ...(config
      ? {
          // Per-turn budgets count the running turn (0 when none runs); the others the whole session.
          budgets: budgetView(budgetsFor(config, record.tenantId, record), {
            modelCallsThisTurn: turnSpend?.modelCalls ?? 0,
            turns: record.turnCount,
            usage: record.usage,
            wallSecondsThisTurn: turnSpend ? Math.max(0, (now - turnSpend.startedAt) / 1000) : 0,
          }),
        }
      : {}),
    currentTurnId: running ? record.lease!.turnId : null,
    lastTurn: record.lastTurn ?? null,
    permissions: {
      mode: record.settings?.permissionMode ?? null,
      unattended: record.settings?.unattended === true,
      hooks: (record.settings?.hooks ?? []).map((h) => ({ event: h.event, matcher: h.matcher ?? null, url: h.url, failMode: h.failMode })),
      denials: denialSummary(record.denials),
    },
    // Header values (tokens) never leave the session record: names only, values redacted.
    mcpServers: mcpServersView(record.settings?.mcpServers),
    toolSearch: record.settings?.toolSearch ?? null,
    agents: record.settings?.agents ?? [],
    reloadFromSeq: record.reloadFromSeq ?? null,
    source: record.source ?? null,
    setup: record.setup ?? null,
    todos: record.todos ?? [],
    ...(waiting ? waitingView(waiting) : {}),
  };
}

/** One page of a message log as the API shows it. */
export function messagePageView(page: { messages: StoredMessage[]; nextCursor?: string }) {
  return { messages: page.messages.map(messageView), nextCursor: page.nextCursor ?? null };
}

export function messageView(message: StoredMessage) {
  return {
    seq: message.seq,
    id: message.uuid,
    turnId: message.turnId,
    kind: message.kind,
    role: message.role,
    content: message.content,
    createdAt: message.createdAt,
    ...(message.stopReason !== undefined ? { stopReason: message.stopReason } : {}),
    ...(message.usage ? { usage: message.usage } : {}),
  };
}
