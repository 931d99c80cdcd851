import type { ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import { BASH_TOOL_NAME } from '../bash-tool.ts';
import { errorOutcome, INTERRUPTED_MESSAGE, noSuchToolMessage, runToolUse, type ToolUseEnv, type ToolUseOutcome } from '../run-tool-use.ts';
import type { ToolUseContext } from '../tool.ts';
import { DEFAULT_MAX_TOOL_CONCURRENCY, isCallConcurrencySafe } from './concurrency.ts';
import { describeToolCall, siblingErrorMessage, STREAM_DISCARDED_MESSAGE } from './synthetic-results.ts';

export type ToolCallStatus = 'queued' | 'executing' | 'completed' | 'yielded';

type Block = Pick<ToolUseBlock, 'id' | 'name' | 'input'>;

/** What the executor hands back, in the order the calls arrived. */
export type ExecutorUpdate =
  | { type: 'progress'; toolUseId: string; toolName: string; progress: unknown }
  | { type: 'outcome'; block: Block; outcome: ToolUseOutcome }
  /** Not started because an earlier call is waiting for a person's answer; it runs after that answer. */
  | { type: 'deferred'; block: Block };

interface TrackedCall {
  block: Block;
  status: ToolCallStatus;
  isConcurrencySafe: boolean;
  outcome?: ToolUseOutcome;
  deferred?: boolean;
  promise?: Promise<void>;
  progress: unknown[];
}

export interface ExecutorOptions {
  /** Most concurrency-safe calls running at once. */
  maxConcurrency?: number;
  /** The per-call pipeline; `runToolUse` unless a caller wraps it (e.g. to measure it). */
  run?: (block: Block, ctx: ToolUseContext, env: ToolUseEnv) => Promise<ToolUseOutcome>;
  /**
   * Asked before a call that is not concurrency-safe (it may have effects) starts: a promise to
   * wait for first, or undefined to start at once. A rejection fails the call without running it.
   */
  beforeUnsafeCall?: () => Promise<void> | undefined;
}

/**
 * Runs tool calls while the model is still streaming. Each call goes queued → executing →
 * completed → yielded. Concurrency-safe calls run together (up to the limit); a call that is
 * not safe runs alone, and nothing queued after it overtakes it. Results come out in the order
 * the calls arrived; progress is forwarded as soon as it exists. An error result from Bash
 * cancels the Bash call's running and queued siblings (their commands often depend on it);
 * other tools' errors cancel nothing. When a call needs a person's answer, calls that have not
 * started yet wait for it too (they come out as `deferred`).
 */
export class StreamingToolExecutor {
  private readonly calls: TrackedCall[] = [];
  private readonly siblingAbort = new AbortController();
  private readonly maxConcurrency: number;
  private readonly run: NonNullable<ExecutorOptions['run']>;
  private readonly beforeUnsafeCall: ExecutorOptions['beforeUnsafeCall'];
  private context: ToolUseContext;
  private hasErrored = false;
  private erroredDescription = '';
  private discarded = false;
  private askPending = false;
  /** A hook asked to end the turn after these calls. */
  stopRequested = false;
  /** Modifiers of concurrency-safe calls wait until their group has finished, then apply in call order. */
  private queuedModifiers: { index: number; modify: NonNullable<Extract<ToolUseOutcome, { kind: 'result' }>['contextModifier']> }[] = [];
  private wake: (() => void) | undefined;

  constructor(
    private readonly env: ToolUseEnv,
    context: ToolUseContext,
    opts: ExecutorOptions = {},
  ) {
    this.context = context;
    this.maxConcurrency = opts.maxConcurrency ?? DEFAULT_MAX_TOOL_CONCURRENCY;
    this.run = opts.run ?? runToolUse;
    this.beforeUnsafeCall = opts.beforeUnsafeCall;
    const parent = context.signal;
    const forward = () => this.siblingAbort.abort(parent.reason);
    if (parent.aborted) forward();
    else {
      parent.addEventListener('abort', forward, { once: true });
      // The turn's signal outlives this executor: do not leave a listener per model call on it.
      this.detach = () => parent.removeEventListener('abort', forward);
    }
  }

  private detach: () => void = () => {};

  /** The context after every modifier applied so far (what the next model call's tools should use). */
  get currentContext(): ToolUseContext {
    return this.context;
  }

  statusOf(toolUseId: string): ToolCallStatus | undefined {
    return this.calls.find((c) => c.block.id === toolUseId)?.status;
  }

  get size(): number {
    return this.calls.length;
  }

  addTool(block: Block): void {
    // Unknown tools fail at once (with runToolUse's text) and never hold up the queue.
    if (!this.env.pool.find(block.name)) return void this.addSynthetic(block, noSuchToolMessage(block.name));
    this.calls.push({ block, status: 'queued', isConcurrencySafe: isCallConcurrencySafe(this.env.pool, block), progress: [] });
    this.processQueue();
  }

  /** A call answered without running (an unknown tool, input that was cut off): completes at once, in order. */
  addSynthetic(block: Block, text: string): void {
    this.calls.push({ block, status: 'completed', isConcurrencySafe: true, progress: [], outcome: errorOutcome(block.id, text) });
    this.notify();
  }

  /**
   * The model stream broke: calls that have not started never will (their result says so);
   * calls already running finish and keep their real results.
   */
  discard(): void {
    this.discarded = true;
    this.processQueue();
  }

  /** Progress reported so far, without results (results wait for the assistant message). */
  *takeProgress(): Generator<Extract<ExecutorUpdate, { type: 'progress' }>> {
    for (const call of this.calls) {
      while (call.progress.length > 0) yield { type: 'progress', toolUseId: call.block.id, toolName: call.block.name, progress: call.progress.shift() };
    }
  }

  /** Completed results in arrival order, stopping at the first call still running. */
  *getCompletedResults(): Generator<ExecutorUpdate> {
    yield* this.takeProgress();
    for (const call of this.calls) {
      if (call.status === 'yielded') continue;
      if (call.status !== 'completed') return;
      call.status = 'yielded';
      if (call.deferred) yield { type: 'deferred', block: call.block };
      else yield { type: 'outcome', block: call.block, outcome: call.outcome! };
    }
  }

  /** Every remaining result, waiting for running calls; ends when all calls are yielded. */
  async *getRemainingResults(): AsyncGenerator<ExecutorUpdate> {
    try {
      for (;;) {
        yield* this.getCompletedResults();
        if (this.calls.every((c) => c.status === 'yielded')) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          // Something may have finished between the scan and now.
          if (this.hasNewWork()) this.notify();
        });
      }
    } finally {
      if (this.calls.every((c) => c.status === 'yielded')) this.detach();
    }
  }

  /**
   * Whether getCompletedResults would yield something now: progress, or the next result in
   * arrival order. A later call that completed early does not count — counting it made the
   * results loop wake itself forever in microtasks while an earlier call still ran, starving
   * the event loop that call needed to finish.
   */
  private hasNewWork(): boolean {
    if (this.calls.some((c) => c.progress.length > 0)) return true;
    return this.calls.find((c) => c.status !== 'yielded')?.status === 'completed';
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private canExecute(isConcurrencySafe: boolean): boolean {
    const executing = this.calls.filter((c) => c.status === 'executing');
    if (executing.length === 0) return true;
    return isConcurrencySafe && executing.length < this.maxConcurrency && executing.every((c) => c.isConcurrencySafe);
  }

  private processQueue(): void {
    for (const call of this.calls) {
      if (call.status !== 'queued') continue;
      const synthetic = this.abortOutcome(call);
      if (synthetic) {
        this.complete(call, synthetic);
        continue;
      }
      if (this.askPending) {
        call.deferred = true;
        call.status = 'completed';
        this.notify();
        continue;
      }
      if (this.canExecute(call.isConcurrencySafe)) this.execute(call);
      else if (!call.isConcurrencySafe) break;
    }
  }

  private abortOutcome(call: TrackedCall): ToolUseOutcome | undefined {
    if (this.context.signal.aborted) return errorOutcome(call.block.id, INTERRUPTED_MESSAGE);
    if (this.discarded) return errorOutcome(call.block.id, STREAM_DISCARDED_MESSAGE);
    if (this.hasErrored) return errorOutcome(call.block.id, siblingErrorMessage(this.erroredDescription));
    return undefined;
  }

  private execute(call: TrackedCall): void {
    call.status = 'executing';
    const ctx: ToolUseContext = {
      ...this.context,
      signal: this.siblingAbort.signal,
      onProgress: (progress) => {
        call.progress.push(progress);
        this.notify();
      },
    };
    const wait = call.isConcurrencySafe ? undefined : this.beforeUnsafeCall?.();
    call.promise = (wait ? wait.then(() => this.run(call.block, ctx, this.env)) : this.run(call.block, ctx, this.env))
      .catch((err: unknown) => errorOutcome(call.block.id, `<tool_use_error>Error: ${String(err)}</tool_use_error>`))
      .then((outcome) => this.onFinished(call, outcome));
  }

  private onFinished(call: TrackedCall, outcome: ToolUseOutcome): void {
    const isError = outcome.kind === 'result' && outcome.result.is_error === true;
    if (this.context.signal.aborted && outcome.kind === 'result' && this.interruptBehaviorOf(call) === 'cancel') {
      // The turn was stopped while this call ran and the tool is one an interrupt cancels (Bash:
      // its command was killed): the interrupted text, as for calls never started.
      // A `block` tool ran to its end and keeps its real result.
      outcome = errorOutcome(call.block.id, INTERRUPTED_MESSAGE);
    } else if (this.hasErrored) {
      // A sibling Bash call errored while this one ran (and was told to stop): say so.
      outcome = errorOutcome(call.block.id, siblingErrorMessage(this.erroredDescription));
    } else if (isError && call.block.name === BASH_TOOL_NAME) {
      this.hasErrored = true;
      this.erroredDescription = describeToolCall(call.block);
      this.siblingAbort.abort('sibling_error');
    }
    if (outcome.kind === 'ask') this.askPending = true;
    this.complete(call, outcome);
    this.processQueue();
  }

  private interruptBehaviorOf(call: TrackedCall): 'cancel' | 'block' {
    try {
      return this.env.pool.find(call.block.name)?.interruptBehavior() ?? 'block';
    } catch {
      return 'block';
    }
  }

  private complete(call: TrackedCall, outcome: ToolUseOutcome): void {
    call.outcome = outcome;
    call.status = 'completed';
    if (outcome.kind === 'result' && outcome.stop) this.stopRequested = true;
    if (outcome.kind === 'result' && outcome.contextModifier) {
      const index = this.calls.indexOf(call);
      if (call.isConcurrencySafe) this.queuedModifiers.push({ index, modify: outcome.contextModifier });
      else this.context = outcome.contextModifier(this.context);
    }
    if (!this.calls.some((c) => c.status === 'executing' && c.isConcurrencySafe)) this.flushModifiers();
    this.notify();
  }

  private flushModifiers(): void {
    const queued = this.queuedModifiers.sort((a, b) => a.index - b.index);
    this.queuedModifiers = [];
    for (const { modify } of queued) this.context = modify(this.context);
  }
}
