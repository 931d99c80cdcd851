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
import type { QuestionTimers } from '../deps/question-timers.ts';
import { errorMessage } from '../shared/errors.ts';
import type { AgentLog } from './agent-driver.ts';

/** What the write-ahead append writes to: the log, then the session's head under the lease. */
export interface AppendDeps extends SessionHeadDeps {
  messages: Pick<MessageStore, 'append'>;
  newId: IdSource;
}

export interface LogWriter {
  /** Stores an item at the next seq and waits until it and every item before it are durable. */
  append: LogAppender;
  /**
   * Gives an item the next seq and starts storing it behind the items before it, without
   * waiting: for the items the model's next request carries (the response, its tool results),
   * so their puts ride beside that request (docs/turns.md, "Durable behind the request").
   * `durable` must be awaited before anything acts on the model's next answer.
   */
  appendBehind(...args: Parameters<LogAppender>): StoredMessage;
  /** Waits until every item given a seq so far is stored; throws the first failed put (the turn then fails). */
  durable(): Promise<void>;
  /** Runs `fn` once every item given a seq so far is stored (at once when none is on its way), in the order asked; not after a failed put. */
  afterStored(fn: () => void): void;
  /** The seq the next item gets. */
  nextSeq(): number;
  /** The session's `messageCount` as far as the log is known to be stored (what head writes may carry). */
  storedCount(): number;
  /** Moves the head past items already in the log (a crash between an append and the counter move leaves the counter behind). */
  skipTo(seq: number): void;
  /** The session's head: its updates run behind the appends, in order (settle the writer before the lease goes). */
  head: SessionHead;
  /** Waits for the log's puts, then the head (throws the first failure of either). */
  flush(): Promise<void>;
  /** Waits for the log's puts and the head, whatever became of them (before the lease is released or handed off). */
  settled(): Promise<void>;
  /** Whether a tool with effects may start now, as the head says. */
  leaseHeld(): Promise<void> | undefined;
}

/**
 * The one write-ahead append, for turns and for work under a session's lease outside a turn
 * (compaction, import). Each item gets the next seq at once; its put runs behind the puts
 * before it, one at a time in seq order, so the log only ever grows by a prefix and a crash
 * leaves what today's recovery reads (docs/turns.md, "The write order"). `append` waits for its
 * put; `appendBehind` does not (its caller awaits `durable` before acting on what follows).
 * The session's head (`messageCount`, plus whatever `patch` adds) then moves past each stored
 * item under the caller's lease, queued behind the previous head update instead of awaited. A
 * failed put or a head update that failed (the lease changed hands) fails every later append.
 */
export function createLogWriter(deps: AppendDeps, at: LogWriterAt): LogWriter {
  const head = createSessionHead(deps, { sessionId: at.sessionId, owner: at.owner, lease: at.lease, marginMs: at.leaseMarginMs ?? deps.config.turn.leaseMs });
  const puts = createPutChain();
  const seqs = { next: at.firstSeq, stored: at.firstSeq };
  const check = () => {
    head.check();
    puts.check();
  };
  const appendBehind = behindAppender(deps, at, { head, puts, seqs, check });
  const durable = async () => {
    await puts.idle();
    check();
  };
  return {
    append: async (...args) => {
      const message = appendBehind(...args);
      await durable();
      return message;
    },
    appendBehind,
    durable,
    afterStored: (fn) => puts.after(fn),
    nextSeq: () => seqs.next,
    storedCount: () => seqs.stored,
    skipTo: (seq) => {
      seqs.next = Math.max(seqs.next, seq);
      seqs.stored = Math.max(seqs.stored, seq);
    },
    head,
    flush: async () => {
      await durable();
      await head.flush();
    },
    settled: async () => {
      await puts.idle();
      await head.settled();
    },
    // Not behind the puts on their way: a tool starts after its answer's first event, when what
    // the request carried is durable (logDurable); what may still be on its way is that answer's
    // own message, which a tool never waited for (docs/turns.md, "Durable behind the request").
    leaseHeld: () => head.leaseHeld(),
  };
}

interface LogWriterAt {
  sessionId: string;
  owner: string;
  turnId: string;
  firstSeq: number;
  patch?: () => SessionPatch;
  lease?: Pick<Lease, 'expiresAt' | 'staleAt'>;
  leaseMarginMs?: number;
}

/**
 * The append every other one is made of: the item gets its seq now, its put is chained behind
 * the ones before it, and once stored the head moves past it with the patch fields that changed.
 */
function behindAppender(
  deps: AppendDeps,
  at: LogWriterAt,
  w: { head: SessionHead; puts: PutChain; seqs: { next: number; stored: number }; check: () => void },
): LogWriter['appendBehind'] {
  /** The JSON of each patch field as this writer last queued it: only fields that moved since are sent again. */
  const stored = new Map<string, string>();
  return (kind, role, content, extra = {}) => {
    w.check();
    const message: StoredMessage = {
      sessionId: at.sessionId,
      seq: w.seqs.next,
      uuid: deps.newId('msg'),
      turnId: at.turnId,
      kind,
      role,
      content,
      createdAt: new Date(deps.clock()).toISOString(),
      ...extra,
    };
    w.seqs.next += 1;
    // The patch as it is now, with this item: queued fields are as good as stored (a failure
    // stops all later updates and the turn ends on it before anything relies on them).
    const { patch, written } = changedFields(at.patch?.() ?? {}, stored);
    for (const [key, json] of written) stored.set(key, json);
    w.puts.run(
      () => deps.messages.append(message),
      () => {
        w.seqs.stored = message.seq + 1;
        w.head.update({ ...patch, messageCount: w.seqs.stored });
      },
    );
    return message;
  };
}

type PutChain = ReturnType<typeof createPutChain>;

/** The log's puts, one at a time in the order asked; the first failure is kept and skips everything after it. */
function createPutChain() {
  let chain: Promise<void> = Promise.resolve();
  let pending = 0;
  let failure: { error: unknown } | undefined;
  const queue = (step: () => Promise<void> | void) => {
    pending += 1;
    chain = chain.then(async () => {
      try {
        if (!failure) await step();
      } catch (error) {
        failure ??= { error };
      } finally {
        pending -= 1;
      }
    });
  };
  return {
    run(put: () => Promise<unknown>, then: () => void) {
      queue(async () => {
        await put();
        then();
      });
    },
    after(fn: () => void) {
      if (pending === 0 && !failure) return fn();
      queue(fn);
    },
    idle: () => chain,
    check() {
      if (failure) throw failure.error;
    },
  };
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
  questionTimers: QuestionTimers;
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
  /** Some call waits for permission or a plan's approval (not only questions): the turn ends `awaiting_permission`. */
  private waitsForPermission = false;
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
    return { ...this.patchWithoutHead(), messageCount: this.writer.storedCount() };
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
    this.emit({ type: 'todos', todos });
  }

  /** Waits for the log and the session's head to be written; throws if a put failed or the lease was lost meanwhile (the turn then fails). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Before a tool with effects starts: undefined when the lease is surely held, else the writes to wait for (docs/turns.md). */
  leaseHeld(): Promise<void> | undefined {
    return this.writer.leaseHeld();
  }

  /** The log items on their way, stored: awaited before anything acts on the model's next answer (docs/turns.md). */
  durable(): Promise<void> {
    return this.writer.durable();
  }

  /**
   * Every event clients see goes out behind the log items recorded before it: a client never
   * sees a message (or what follows it) that a crash could still lose.
   */
  private emit(event: Parameters<TurnFeed['push']>[0]): void {
    this.writer.afterStored(() => this.turn.events.push(event));
  }

  /** How the loop ended. Calls can be left waiting even when it ended otherwise (a stream that broke mid-way). */
  outcome(): TurnOutcome {
    if (this.pendingOrder > 0 && this.done.stopReason !== 'internal_error')
      return { ...this.done, stopReason: this.waitsForPermission ? 'awaiting_permission' : 'awaiting_answer' };
    return this.done;
  }

  /** The session's log as the driver records into it (agent-driver.ts): what each event of the query loop means for it. */
  agentLog(): AgentLog {
    const { log } = this.turn;
    const emit = (event: Parameters<TurnFeed['push']>[0]) => this.emit(event);
    return {
      text_delta: (event) => emit(event),
      tool_progress: (event) => emit(event),
      assistant: (event) => this.recordAssistant(event),
      tool_result: (event) => this.recordToolResult(event),
      permission_request: async (event) => {
        if (event.interaction === 'question') return this.waitForAnswer(event);
        if (event.interaction === 'plan') return this.waitForPlanApproval(event);
        await this.waitFor('ask', event.toolUseId, event.toolName, event.input, event.message);
        emit(event);
      },
      tool_deferred: (event) => this.waitFor('deferred', event.toolUseId, event.toolName, event.input),
      // Durable records of a broken stream, retries, the fallback and the max_tokens resume request.
      tombstone: async (event) => {
        const stored = await this.append('tombstone', 'assistant', event.content as ContentBlockParam[], { error: event.error });
        emit({ type: 'tombstone', seq: stored.seq, error: event.error });
      },
      retry: (event) => {
        log.warn('model call failed; retrying', { attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
        emit({ type: 'model_retry', attempt: event.attempt, delayMs: event.delayMs, status: event.status, error: event.error });
      },
      fallback: (event) => {
        log.warn('primary model stayed overloaded; moving to the fallback model', { from: event.from, to: event.to });
        emit({ type: 'model_fallback', from: event.from, to: event.to });
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
    // Stored behind: its calls are already running, and nothing acts on the next answer before it is durable.
    const stored = this.writer.appendBehind('assistant', 'assistant', response.content as ContentBlockParam[], {
      model: response.model,
      stopReason: response.stopReason,
      usage: { ...response.usage, costUsd: cost },
      decisions: event.decisions,
    });
    this.emit({ type: 'assistant_message', seq: stored.seq, content: response.content, stopReason: response.stopReason, usage: { ...this.turnUsage } });
    for (const block of response.content) {
      if (block.type === 'tool_use') this.emit({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    }
  }

  private async recordToolResult(event: Extract<QueryEvent, { type: 'tool_result' }>): Promise<void> {
    if (event.denied) {
      const tracked = recordDenial(this.denials, event.toolName);
      this.denials = tracked.counts;
      this.emit({
        type: 'permission_denied',
        toolUseId: event.block.tool_use_id,
        toolName: event.toolName,
        count: tracked.count,
        ...(tracked.suggestion ? { suggestion: tracked.suggestion } : {}),
      });
    }
    // Stored behind: its put rides beside the next model request (docs/turns.md, "Durable behind the request").
    const stored = this.writer.appendBehind('tool_result', 'user', [event.block, ...event.extra]);
    const failed = event.block.is_error === true;
    // Per tool, so a dashboard can show which tool fails (a denial counts as a failure the model saw).
    this.deps.metrics.emit(
      { ToolCalls: { value: 1, unit: 'Count' }, ToolFailures: { value: failed ? 1 : 0, unit: 'Count' } },
      { dimensions: { tool: event.toolName }, metadata: { sessionId: this.turn.session.sessionId, turnId: this.turn.turnId } },
    );
    this.emit({
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
    const sessionId = this.turn.session.sessionId;
    // Without its timer the question still takes an answer or a decline: worth a log, not the turn.
    await this.deps.questionTimers
      .arm({ sessionId, toolUseId: event.toolUseId, expiresAt })
      .catch((err: unknown) => this.turn.log.error('arming the question timeout failed', { sessionId, toolUseId: event.toolUseId, error: errorMessage(err) }));
    const questions = (event.input as { questions: AskedQuestion[] }).questions;
    this.emit({ type: 'question', toolUseId: event.toolUseId, questions, expiresAt });
  }

  /** A plan for a person to approve (ExitPlanMode): stored with no time limit (the wait costs nothing), then streamed. */
  private async waitForPlanApproval(event: Extract<QueryEvent, { type: 'permission_request' }>): Promise<void> {
    await this.waitFor('plan', event.toolUseId, event.toolName, event.input, event.message);
    const { plan } = event.input as { plan?: string };
    this.emit({ type: 'plan', toolUseId: event.toolUseId, plan: plan ?? '' });
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
    // A plan waits for approval like a permission ask; only questions alone end `awaiting_answer`.
    if (kind === 'ask' || kind === 'plan') this.waitsForPermission = true;
    // The call it waits on is in the log before the wait is: a crash never leaves a wait for a call nobody stored.
    await this.writer.durable();
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
