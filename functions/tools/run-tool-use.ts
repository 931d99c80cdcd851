import type { ContentBlockParam, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages';
import type { ZodError } from 'zod';
import { runPostToolUseHooks, runPreToolUseHooks } from '../hooks/tool-hooks.ts';
import type { HookDefinition } from '../hooks/types.ts';
import { rulesForCall } from '../permissions/call-rules.ts';
import { decidePermission, denyOrAskByRule, finalizeAsk } from '../permissions/decide.ts';
import { USER_REJECTED_MESSAGE, userRejectedWithFeedback } from '../permissions/messages.ts';
import type { PermissionContext, PermissionDecision } from '../permissions/types.ts';
import { errorMessage } from '../shared/errors.ts';
import { describeInputIssues } from './input-errors.ts';
import type { ToolRegistry } from './registry.ts';
import type { Tool, ToolContext, ToolResult, ToolUseContext } from './tool.ts';

/** Longest error text passed to the model; longer ones keep their head and tail. */
export const MAX_ERROR_CHARS = 10_000;

/**
 * The result of a call that was not started because the turn was stopped first, wherever that
 * is noticed (queued in the executor, or between the permission decision and the call): the
 * reference's text for an interrupted call (its streaming executor's REJECT_MESSAGE).
 */
export const INTERRUPTED_MESSAGE = USER_REJECTED_MESSAGE;

export function noSuchToolMessage(name: string): string {
  return `<tool_use_error>Error: No such tool available: ${name}</tool_use_error>`;
}

/** What a person answered to a durable ask. */
export type UserDecision = { behavior: 'allow'; updatedInput?: unknown } | { behavior: 'deny'; feedback?: string };

/** Everything a call's policy depends on besides the call itself. */
export interface ToolUseEnv {
  pool: ToolRegistry;
  permissions: PermissionContext;
  hooks: readonly HookDefinition[];
  /** Answers to durable asks, by tool_use id: they replace the permission decision. */
  decisions?: ReadonlyMap<string, UserDecision>;
}

export type ToolUseOutcome =
  | {
      kind: 'result';
      result: ToolResultBlockParam;
      /** Content for the model after the tool_result (the tool's newMessages, hook context). */
      extra: ContentBlockParam[];
      contextModifier?: ToolResult<unknown>['contextModifier'];
      /** Set when a permission decision refused the call (for denial tracking). */
      denied?: { toolName: string };
      /** A hook asked to end the turn after this call. */
      stop?: { reason?: string };
    }
  | {
      kind: 'ask';
      toolUseId: string;
      toolName: string;
      input: unknown;
      message: string;
      /** Set when the call waits for a person's input (the tool's `interaction`), not for a permission. */
      interaction?: Tool['interaction'];
      /** With `interaction`: how long it may wait before it goes on without an answer (ms). */
      waitMs?: number;
    };

/** What a waiting interaction says it waits for (the reference's permission texts for AskUserQuestion and ExitPlanMode). */
const INTERACTION_MESSAGES: Record<NonNullable<Tool['interaction']>, string> = { question: 'Answer questions?', plan: 'Exit plan mode?' };

type Block = Pick<ToolUseBlock, 'id' | 'name' | 'input'>;

/**
 * One tool call from start to finish: find → parse → validateInput → PreToolUse hooks →
 * permission → call → PostToolUse hooks → map. Every failure — unknown tool, bad input, a
 * refusal, a throw inside call, a runner failure — becomes an error tool_result; nothing
 * escapes, so every tool_use gets exactly one tool_result. The one other outcome is `ask`: the
 * call waits, durably, for a person's answer.
 */
export async function runToolUse(block: Block, ctx: ToolUseContext, env: ToolUseEnv): Promise<ToolUseOutcome> {
  const tool = env.pool.find(block.name);
  if (!tool) return errorOutcome(block.id, noSuchToolMessage(block.name));
  if (ctx.signal.aborted) return errorOutcome(block.id, INTERRUPTED_MESSAGE);
  const callCtx: ToolContext = { ...ctx, toolUseId: block.id };
  try {
    return await runFoundTool(tool, block, callCtx, env);
  } catch (err) {
    ctx.log.warn('tool call failed', { tool: tool.name, toolUseId: block.id, error: errorMessage(err) });
    return errorOutcome(block.id, truncateMiddle(errorMessage(err) || 'Command failed with no output', MAX_ERROR_CHARS));
  }
}

async function runFoundTool(tool: Tool, block: Block, ctx: ToolContext, env: ToolUseEnv): Promise<ToolUseOutcome> {
  const parsed = tool.inputSchema.safeParse(block.input);
  if (!parsed.success) return errorOutcome(block.id, inputError(tool, parsed.error));
  const validation = await tool.validateInput(parsed.data, ctx);
  if (!validation.ok) return errorOutcome(block.id, `<tool_use_error>${validation.message}</tool_use_error>`);
  const call: CallState = {
    input: parsed.data,
    extra: [],
    hookInput: { sessionId: ctx.sessionId, turnId: ctx.turnId, toolName: tool.name, toolUseId: block.id, permissionMode: env.permissions.mode },
  };
  const decided = await decide(tool, block, ctx, env, call);
  if (decided.kind !== 'allow') return decided.outcome;
  const { decision } = decided;
  if (decision.updatedInput !== undefined) {
    const reparsed = tool.inputSchema.safeParse(decision.updatedInput);
    if (!reparsed.success) return errorOutcome(block.id, inputError(tool, reparsed.error));
    call.input = reparsed.data;
  }
  const waiting = interactionWait(tool, block, call, ctx, env);
  if (waiting) return waiting;
  if (ctx.signal.aborted) return errorOutcome(block.id, INTERRUPTED_MESSAGE);
  const resumed = tool.interaction !== undefined && env.decisions?.has(block.id) === true;
  return callTool(tool, block, resumed ? { ...ctx, resumedInteraction: true } : ctx, env, call);
}

/**
 * A permitted call of a tool that needs a person waits for one (durably, like an ask), unless
 * it comes back from that wait (a resume) or no one can answer (it then runs without an answer).
 * A question waits as long as the session's question timeout; a plan has no timeout: it waits
 * for a person wherever one can answer (not in a sub-agent, nor in an unattended session unless
 * it is "plan first").
 */
function interactionWait(tool: Tool, block: Block, call: CallState, ctx: ToolContext, env: ToolUseEnv): ToolUseOutcome | undefined {
  if (!tool.interaction || env.decisions?.has(block.id)) return undefined;
  const canAnswer = tool.interaction === 'plan' ? ctx.permissionMode?.plansAwaitApproval === true : Boolean(ctx.interactionTimeoutMs);
  if (!canAnswer) return undefined;
  const message = INTERACTION_MESSAGES[tool.interaction];
  const waitMs = tool.interaction === 'question' ? { waitMs: ctx.interactionTimeoutMs } : {};
  return { kind: 'ask', toolUseId: block.id, toolName: tool.name, input: call.input, message, interaction: tool.interaction, ...waitMs };
}

/** A call on its way through the pipeline: its input so far, the content for after its result, a hook's stop. */
interface CallState {
  input: unknown;
  extra: ContentBlockParam[];
  stop?: { reason?: string };
  hookInput: { sessionId: string; turnId: string; toolName: string; toolUseId: string; permissionMode: PermissionContext['mode'] };
}

/** The permission decision: a person's answer to a durable ask, else PreToolUse hooks, rules and mode. */
async function decide(
  tool: Tool,
  block: Block,
  ctx: ToolContext,
  env: ToolUseEnv,
  call: CallState,
): Promise<{ kind: 'allow'; decision: Extract<PermissionDecision, { behavior: 'allow' }> } | { kind: 'done'; outcome: ToolUseOutcome }> {
  const answered = env.decisions?.get(block.id);
  if (answered?.behavior === 'deny') {
    const text = answered.feedback ? userRejectedWithFeedback(answered.feedback) : USER_REJECTED_MESSAGE;
    return { kind: 'done', outcome: { ...errorOutcome(block.id, text), denied: { toolName: tool.name } } };
  }
  if (answered) return { kind: 'allow', decision: { behavior: 'allow', updatedInput: answered.updatedInput, reason: { type: 'user', remember: false } } };
  const pre = await runPreToolUseHooks(env.hooks, { ...call.hookInput, toolInput: call.input }, { signal: ctx.signal, log: ctx.log });
  for (const text of pre.additionalContext) call.extra.push({ type: 'text', text });
  if (pre.preventContinuation) call.stop = { reason: pre.stopReason };
  if (pre.updatedInput) {
    const reparsed = tool.inputSchema.safeParse(pre.updatedInput);
    if (!reparsed.success) return { kind: 'done', outcome: errorOutcome(block.id, inputError(tool, reparsed.error)) };
    call.input = reparsed.data;
  }
  const decision = pre.permission
    ? await withHookVerdict(pre.permission, tool, call.input, env.permissions)
    : await decidePermission(tool, call.input, ctx, env.permissions);
  if (decision.behavior === 'deny')
    return {
      kind: 'done',
      outcome: { kind: 'result', result: errorResult(block.id, decision.message), extra: call.extra, denied: { toolName: tool.name }, stop: call.stop },
    };
  if (decision.behavior === 'ask')
    return { kind: 'done', outcome: { kind: 'ask', toolUseId: block.id, toolName: tool.name, input: call.input, message: decision.message } };
  return { kind: 'allow', decision };
}

/** `call`, then the PostToolUse (or PostToolUseFailure) hooks, then the mapping to a tool_result. */
async function callTool(tool: Tool, block: Block, ctx: ToolContext, env: ToolUseEnv, call: CallState): Promise<ToolUseOutcome> {
  const { extra, input } = call;
  let stop = call.stop;
  const hookOpts = { signal: ctx.signal, log: ctx.log };
  let output: ToolResult<unknown>;
  try {
    output = await tool.call(input, ctx);
  } catch (err) {
    const text = truncateMiddle(errorMessage(err) || 'Command failed with no output', MAX_ERROR_CHARS);
    ctx.log.warn('tool call failed', { tool: tool.name, toolUseId: block.id, error: text.slice(0, 500) });
    const post = await runPostToolUseHooks(env.hooks, { ...call.hookInput, toolInput: input, error: text }, true, hookOpts);
    for (const t of post.additionalContext) extra.push({ type: 'text', text: t });
    if (post.preventContinuation) stop ??= { reason: post.stopReason };
    return { kind: 'result', result: errorResult(block.id, text), extra, stop };
  }
  let result = tool.mapToolResultToToolResultBlockParam(output.data, block.id);
  const post = await runPostToolUseHooks(env.hooks, { ...call.hookInput, toolInput: input, toolResponse: result.content }, result.is_error === true, hookOpts);
  // Only an external tool's output may be rewritten: built-in results are ours to vouch for.
  if (post.updatedOutput !== undefined && tool.isExternal) result = { ...result, content: asResultContent(post.updatedOutput) };
  for (const t of post.additionalContext) extra.push({ type: 'text', text: t });
  if (post.preventContinuation) stop ??= { reason: post.stopReason };
  if (output.newMessages) extra.push(...output.newMessages);
  return { kind: 'result', result, extra, contextModifier: output.contextModifier, stop };
}

/** A hook's verdict: deny and ask stand; allow still yields to the rules that deny or ask. */
async function withHookVerdict(
  verdict: { behavior: 'allow' | 'deny' | 'ask'; message: string; hookName: string },
  tool: Tool,
  input: unknown,
  permissions: PermissionContext,
): Promise<PermissionDecision> {
  const reason = { type: 'hook' as const, hookName: verdict.hookName };
  if (verdict.behavior === 'deny') return { behavior: 'deny', message: verdict.message, reason };
  if (verdict.behavior === 'ask') return finalizeAsk({ behavior: 'ask', message: verdict.message, reason }, tool, permissions);
  const ruled = denyOrAskByRule(tool.name, input, await rulesForCall(permissions.rules, tool, input));
  return ruled ? finalizeAsk(ruled, tool, permissions) : { behavior: 'allow', reason };
}

function inputError(tool: Tool, error: ZodError): string {
  return `<tool_use_error>${describeInputIssues(tool.name, error)}</tool_use_error>`;
}

function asResultContent(value: unknown): ToolResultBlockParam['content'] {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value as ToolResultBlockParam['content'];
  return JSON.stringify(value);
}

export function errorResult(toolUseId: string, content: string): ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true };
}

/** An error result for a call that did not run to the end (nothing else: no extra content, no modifier). */
export function errorOutcome(toolUseId: string, content: string): Extract<ToolUseOutcome, { kind: 'result' }> {
  return { kind: 'result', result: errorResult(toolUseId, content), extra: [] };
}

/** Keeps the head and the tail of a long error, saying how much was dropped between them. */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n\n... [${text.length - max} characters truncated] ...\n\n${text.slice(-half)}`;
}
