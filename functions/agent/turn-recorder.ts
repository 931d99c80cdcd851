import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { costUsd, type PriceTable } from '../model/pricing.ts';
import { addUsage, type BudgetName } from '../stores/budgets.ts';
import type { LogAppender } from '../context/session-context.ts';
import { recordDenial, type DenialCounts } from '../permissions/denial-tracking.ts';
import type { SessionSettings } from '../session-settings/session-settings.ts';
import type { IdSource } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import type { ApprovalStore, PendingApproval } from '../stores/approval-store.ts';
import type { MessageStore, StoredMessage } from '../stores/message-store.ts';
import type { Lease, SessionPatch, SessionRecord, TodoItem } from '../stores/session-store.ts';
import { createSessionHead, type SessionHead, type SessionHeadDeps } from './session-head.ts';
import type { QueryEvent, TurnStopReason } from './query.ts';
import type { AskedQuestion, UsageTotals } from '../stores/turn-event.ts';
import type { TurnFeed } from './turn-feed.ts';
import { heartbeatEveryMs } from './turn-lease.ts';
import type { Metrics } from '../shared/metrics.ts';
import type { AgentLog } from './agent-driver.ts';

/** What the write-ahead append writes to: the log, then the session's head under the lease. */
export interface AppendDeps extends SessionHeadDeps {
  messages: Pick<MessageStore, 'append'>;
  newId: IdSource;
}

export interface LogWriter {
  append: LogAppender;
  /** The seq the next item gets (the session's `messageCount` after the last append). */
  nextSeq(): number;
  /** Moves the head past items already in the log (a crash between an append and the counter move leaves the counter behind). */
  skipTo(seq: number): void;
  /** The session's head: its updates run behind the appends, in order (flush / settle it before the lease goes). */
  head: SessionHead;
}

/**
 * The one write-ahead append, for turns and for work under a session's lease outside a turn
 * (compaction, import): each item gets the next seq and is durable before the append returns
 * (the model never sees an item that is not in the log); the session's head (`messageCount`,
 * plus whatever `patch` adds) then moves past it under the caller's lease, queued behind the
 * previous head update instead of awaited (docs/turns.md, "The write order"). A head update
 * that failed (the lease changed hands) fails every later append.
 */
export function createLogWriter(
  deps: AppendDeps,
  at: {
    sessionId: string;
    owner: string;
    turnId: string;
    firstSeq: number;
    patch?: () => SessionPatch;
    lease?: Pick<Lease, 'expiresAt' | 'staleAt'>;
    leaseMarginMs?: number;
  },
): LogWriter {
  let nextSeq = at.firstSeq;
  const head = createSessionHead(deps, { sessionId: at.sessionId, owner: at.owner, lease: at.lease, marginMs: at.leaseMarginMs ?? deps.config.turn.leaseMs });
  /** The JSON of each patch field as this writer last queued it: only fields that moved since are sent again. */
  const stored = new Map<string, string>();
  const append: LogAppender = async (kind, role, content, extra = {}) => {
    head.check();
    const message: StoredMessage = {
      sessionId: at.sessionId,
      seq: nextSeq,
      uuid: deps.newId('msg'),
      turnId: at.turnId,
      kind,
      role,
      content,
      createdAt: new Date(deps.clock()).toISOString(),
      ...extra,
    };
    await deps.messages.append(message);
    nextSeq += 1;
    // Queued updates run in order and a failure stops all later ones, so a field queued is as
    // good as stored: the turn ends on the failure before anything relies on it.
    const { patch, written } = changedFields(at.patch?.() ?? {}, stored);
    for (const [key, json] of written) stored.set(key, json);
    head.update({ ...patch, messageCount: nextSeq });
    // The lease was lost while the item was stored: say so now rather than at the next append.
    head.check();
    return message;
  };
  return { append, nextSeq: () => nextSeq, skipTo: (seq) => void (nextSeq = Math.max(nextSeq, seq)), head };
}

/**
 * The fields of `patch` whose value differs from what this writer last stored. The session's
 * fields in a patch are written only by the lease holder, so what it stored is still there; a
 * round trip that changed nothing but the head (most of them: a Read moves the read-file state,
 * a response the usage) sends only what moved instead of the whole read-file state every time.
 */
function changedFields(patch: SessionPatch, stored: ReadonlyMap<string, string>): { patch: SessionPatch; written: [string, string][] } {
  const out: Record<string, unknown> = {};
  const written: [string, string][] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const json = JSON.stringify(value);
    if (stored.get(key) === json) continue;
    out[key] = value;
    written.push([key, json]);
  }
  return { patch: out as SessionPatch, written };
}

export interface RecorderDeps extends AppendDeps {
  approvals: Pick<ApprovalStore, 'put'>;
  config: { turn: { leaseMs: number; heartbeatMs: number }; modelPrices: PriceTable };
  metrics: Metrics;
}

/** The workspace as the session record keeps it (moves with every append). */
export type WorkspaceState = () => Pick<SessionPatch, 'workspace' | 'cwd' | 'fileState' | 'attachedInstructions' | 'environmentSection'>;

export interface TurnOutcome {
  stopReason: TurnStopReason | 'internal_error';
  error?: string;
  /** With `budget_exceeded`: which budget. */
  budget?: BudgetName;
}

/**
 * Everything a turn writes while its loop runs: the log (through the write-ahead append), the
 * session's patch (head, workspace, usage, denials, settings), the calls left waiting, and the
 * events clients see. `agentLog` is the one mapping from what the query loop yields to stored
 * messages and turn events.
 */
export class TurnRecorder {
  readonly writer: LogWriter;
  readonly usage: UsageTotals;
  readonly turnUsage: UsageTotals = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0 };
  modelCalls: number;
  /** The last thing recorded was a tool call's result (an interrupt then gets the "for tool use" note). */
  endedInToolUse = false;
  settings: SessionSettings | undefined;
  private denials: DenialCounts;
  private pendingOrder = 0;
  private done: TurnOutcome = { stopReason: 'internal_error' };

  constructor(
    private readonly deps: RecorderDeps,
    private readonly turn: {
      session: SessionRecord;
      turnId: string;
      owner: string;
      events: TurnFeed;
      log: Logger;
      workspace: WorkspaceState;
      modelCallsBefore: number;
      startedAt: number;
    },
  ) {
    const { session } = turn;
    this.usage = { cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0, ...session.usage };
    this.denials = { ...session.denials };
    this.settings = session.settings;
    this.modelCalls = turn.modelCallsBefore;
    this.writer = createLogWriter(deps, {
      sessionId: session.sessionId,
      owner: turn.owner,
      turnId: turn.turnId,
      firstSeq: session.messageCount,
      patch: () => this.patchWithoutHead(),
      // One beat interval: the skew the lease already allows between clocks, and a beat late.
      lease: session.lease,
      leaseMarginMs: heartbeatEveryMs(deps.config.turn),
    });
  }

  get append(): LogAppender {
    return this.writer.append;
  }

  /** The session as this turn leaves it so far (every append writes it; the release and the hand-off too). */
  patch(): SessionPatch {
    return { ...this.patchWithoutHead(), messageCount: this.writer.nextSeq() };
  }

  /** Settings changed for the rest of the session (a remembered answer): written now, under the lease. */
  async saveSettings(settings: SessionSettings | undefined): Promise<void> {
    this.settings = settings;
    this.writer.head.update({ settings });
    await this.writer.head.flush();
  }

  /** The main agent's task list (TodoWrite): written now, under the lease, then streamed. */
  async saveTodos(todos: TodoItem[]): Promise<void> {
    this.writer.head.update({ todos });
    await this.writer.head.flush();
    this.turn.events.push({ type: 'todos', todos });
  }

  /** Waits for the session's head to be written; throws if the lease was lost meanwhile (the turn then fails). */
  flush(): Promise<void> {
    return this.writer.head.flush();
  }

  /** Before a tool with effects starts: undefined when the lease is surely held, else the head writes to wait for (docs/turns.md). */
  leaseHeld(): Promise<void> | undefined {
    return this.writer.head.leaseHeld();
  }

  /** How the loop ended. Calls can be left waiting even when it ended otherwise (a stream that broke mid-way). */
  outcome(): TurnOutcome {
    if (this.pendingOrder > 0 && this.done.stopReason !== 'internal_error') return { ...this.done, stopReason: 'awaiting_permission' };
    return this.done;
  }

  /** The session's log as the driver records into it (agent-driver.ts): what each event of the query loop means for it. */
  agentLog(): AgentLog {
    const { events, log } = this.turn;
    return {
      text_delta: (event) => events.push(event),
      tool_progress: (event) => events.push(event),
      assistant: (event) => this.recordAssistant(event),
      tool_result: (event) => this.recordToolResult(event),
      permission_request: async (event) => {
        if (event.interaction === 'question') return this.waitForAnswer(event);
        if (event.interaction === 'plan') return this.waitForPlanApproval(event);
        await this.waitFor('ask', event.toolUseId, event.toolName, event.input, event.message);
        events.push(event);
      },
      tool_deferred: (event) => this.waitFor('deferred', event.toolUseId, event.toolName, event.input),
      // Durable records of a broken stream, retries, the fallback and the max_tokens resume request.
      tombstone: async (event) => {
        const stored = await this.append('tombstone', 'assistant', event.content as ContentBlockParam[], { error: event.error });
        events.push({ type: 'tombstone', seq: stored.seq, error: event.error });
      },
      retry: (event) => {
        log.warn('model call failed; retrying', { attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
        events.push({ type: 'model_retry', attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
      },
      fallback: (event) => {
        log.warn('primary model stayed overloaded; moving to the fallback model', { from: event.from, to: event.to });
        events.push({ type: 'model_fallback', from: event.from, to: event.to });
      },
      meta_user: async (event) => {
        await this.append('synthetic', 'user', [{ type: 'text', text: event.text }]);
      },
      done: (event) => {
        this.done = { stopReason: event.stopReason, ...(event.error !== undefined ? { error: event.error } : {}) };
      },
    };
  }

  /**
   * A sub-agent's model call (functions/agent/subagent-runner.ts): it counts toward the turn's
   * model calls and the session's usage and cost like the turn's own, and the session record
   * has it at once (written under the lease), so budgets see it before the next call anywhere.
   */
  async countSubagentCall(response: Extract<QueryEvent, { type: 'assistant' }>['response']): Promise<number> {
    const cost = this.countCall(response);
    this.writer.head.update(this.patch());
    await this.writer.head.flush();
    return cost;
  }

  /**
   * A tool's own model request (WebFetch's page reader, WebSearch): its tokens and cost count
   * toward the session's usage and budgets like any call's, written under the lease at once; it
   * is not one of the turn's model calls (the call that asked for the tool was).
   */
  async countToolModelCall(response: Extract<QueryEvent, { type: 'assistant' }>['response']): Promise<number> {
    const cost = costUsd(this.deps.config.modelPrices, response.model, response.usage);
    for (const totals of [this.turnUsage, this.usage]) addUsage(totals, { ...response.usage, costUsd: cost });
    this.writer.head.update(this.patch());
    await this.writer.head.flush();
    return cost;
  }

  /** Adds one model call to the turn's and the session's totals; returns its cost. */
  private countCall(response: Extract<QueryEvent, { type: 'assistant' }>['response']): number {
    this.modelCalls += 1;
    const cost = costUsd(this.deps.config.modelPrices, response.model, response.usage);
    for (const totals of [this.turnUsage, this.usage]) addUsage(totals, { ...response.usage, costUsd: cost });
    return cost;
  }

  private async recordAssistant(event: Extract<QueryEvent, { type: 'assistant' }>): Promise<void> {
    const { response } = event;
    this.endedInToolUse = response.content.some((b) => b.type === 'tool_use');
    const cost = this.countCall(response);
    // `model` is the model that answered (the fallback after one); `decisions` are the replacement
    // decisions the request was sent with: a reload re-applies exactly these.
    const stored = await this.append('assistant', 'assistant', response.content as ContentBlockParam[], {
      model: response.model,
      stopReason: response.stopReason,
      usage: { ...response.usage, costUsd: cost },
      decisions: event.decisions,
    });
    const { events } = this.turn;
    events.push({ type: 'assistant_message', seq: stored.seq, content: response.content, stopReason: response.stopReason, usage: { ...this.turnUsage } });
    for (const block of response.content) {
      if (block.type === 'tool_use') events.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    }
  }

  private async recordToolResult(event: Extract<QueryEvent, { type: 'tool_result' }>): Promise<void> {
    const { events } = this.turn;
    if (event.denied) {
      const tracked = recordDenial(this.denials, event.toolName);
      this.denials = tracked.counts;
      events.push({
        type: 'permission_denied',
        toolUseId: event.block.tool_use_id,
        toolName: event.toolName,
        count: tracked.count,
        ...(tracked.suggestion ? { suggestion: tracked.suggestion } : {}),
      });
    }
    const stored = await this.append('tool_result', 'user', [event.block, ...event.extra]);
    const failed = event.block.is_error === true;
    // Per tool, so a dashboard can show which tool fails (a denial counts as a failure the model saw).
    this.deps.metrics.emit(
      { ToolCalls: { value: 1, unit: 'Count' }, ToolFailures: { value: failed ? 1 : 0, unit: 'Count' } },
      { dimensions: { tool: event.toolName }, metadata: { sessionId: this.turn.session.sessionId, turnId: this.turn.turnId } },
    );
    events.push({
      type: 'tool_result',
      seq: stored.seq,
      toolUseId: event.block.tool_use_id,
      toolName: event.toolName,
      isError: event.block.is_error === true,
      content: event.block.content,
    });
  }

  /** A question for a person (AskUserQuestion): stored with when it goes on without an answer, then streamed. */
  private async waitForAnswer(event: Extract<QueryEvent, { type: 'permission_request' }>): Promise<void> {
    const expiresAt = new Date(this.deps.clock() + (event.waitMs ?? 0)).toISOString();
    await this.waitFor('question', event.toolUseId, event.toolName, event.input, event.message, expiresAt);
    const questions = (event.input as { questions: AskedQuestion[] }).questions;
    this.turn.events.push({ type: 'question', toolUseId: event.toolUseId, questions, expiresAt });
  }

  /** A plan for a person to approve (ExitPlanMode): stored with no time limit (the wait costs nothing), then streamed. */
  private async waitForPlanApproval(event: Extract<QueryEvent, { type: 'permission_request' }>): Promise<void> {
    await this.waitFor('plan', event.toolUseId, event.toolName, event.input, event.message);
    const { plan } = event.input as { plan?: string };
    this.turn.events.push({ type: 'plan', toolUseId: event.toolUseId, plan: plan ?? '' });
  }

  /** A call that waits for a person (ask, question, plan) or behind one (deferred), in call order. */
  private async waitFor(
    kind: PendingApproval['kind'],
    toolUseId: string,
    toolName: string,
    input: unknown,
    message?: string,
    expiresAt?: string,
  ): Promise<void> {
    await this.deps.approvals.put({
      sessionId: this.turn.session.sessionId,
      toolUseId,
      turnId: this.turn.turnId,
      order: this.pendingOrder++,
      toolName,
      input,
      kind,
      ...(message ? { message } : {}),
      ...(expiresAt ? { expiresAt } : {}),
      createdAt: new Date(this.deps.clock()).toISOString(),
    });
  }

  private patchWithoutHead(): SessionPatch {
    const turnSpend = { turnId: this.turn.turnId, modelCalls: this.modelCalls, startedAt: this.turn.startedAt };
    return { ...this.turn.workspace(), usage: this.usage, denials: this.denials, turnSpend };
  }
}
