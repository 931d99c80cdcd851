import type { ContentBlockParam, MessageParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { PERSISTED_OUTPUT_TAG } from './persisted-output.ts';

/**
 * Which tool results the model sees replaced, decided once per tool_use_id and never revised:
 * `seenIds` are results that went through a budget check (replaced or not); `replacements`
 * maps the replaced ones to the exact text the model saw. Re-applying a decision is a map
 * lookup, so the request bytes for the conversation so far are identical on every call — on
 * this instance, after a reload on another one, after a resume, and in a fork that clones it.
 */
export interface ContentReplacementState {
  seenIds: Set<string>;
  replacements: Map<string, string>;
}

/** One batch of decisions as written to the session's log (`decisions` of a StoredMessage, stores/message-store.ts). */
export interface ReplacementDecisions {
  /** Newly seen ids kept as they were (frozen). */
  seen: string[];
  /** Newly replaced ids and the exact text the model sees instead. */
  replaced: { toolUseId: string; replacement: string }[];
}

export function createContentReplacementState(): ContentReplacementState {
  return { seenIds: new Set(), replacements: new Map() };
}

/** A fork (a sub-agent sharing the parent's cache) decides exactly as the parent would. */
export function cloneContentReplacementState(source: ContentReplacementState): ContentReplacementState {
  return { seenIds: new Set(source.seenIds), replacements: new Map(source.replacements) };
}

/** Folds recorded decisions, in log order, into a state (a reload or a resume). */
export function applyDecisions(state: ContentReplacementState, decisions: ReplacementDecisions): ContentReplacementState {
  for (const id of decisions.seen) state.seenIds.add(id);
  for (const r of decisions.replaced) {
    state.seenIds.add(r.toolUseId);
    state.replacements.set(r.toolUseId, r.replacement);
  }
  return state;
}

export function isEmptyDecisions(d: ReplacementDecisions): boolean {
  return d.seen.length === 0 && d.replaced.length === 0;
}

interface Candidate {
  toolUseId: string;
  content: NonNullable<ToolResultBlockParam['content']>;
  size: number;
}

export interface BudgetOptions {
  /** Aggregate chars allowed for the tool results of one API-level user message. */
  limit: number;
  /** Tools whose results are never replaced (those that opt out of persistence: Read). */
  skipToolNames: ReadonlySet<string>;
  /** Persists one result and returns the text that replaces it; null when persisting failed. */
  persist(toolUseId: string, content: NonNullable<ToolResultBlockParam['content']>): Promise<string | null>;
}

/**
 * Keeps each API-level user message's tool results under the budget. Candidates are split by
 * prior decision: replaced (re-apply the recorded text), frozen (seen and kept: replacing them
 * now would change bytes the model already saw), fresh (decide now: the largest first until the
 * message fits). Mutates `state` and returns what it newly decided, for the caller to record
 * before the request goes out.
 */
export async function enforceToolResultBudget(
  messages: readonly MessageParam[],
  state: ContentReplacementState,
  opts: BudgetOptions,
): Promise<{ messages: MessageParam[]; decisions: ReplacementDecisions }> {
  const toolNames = toolNameById(messages);
  const decisions: ReplacementDecisions = { seen: [], replaced: [] };
  const markSeen = (id: string) => {
    if (state.seenIds.has(id)) return;
    state.seenIds.add(id);
    decisions.seen.push(id);
  };
  const toPersist: Candidate[] = [];

  for (const message of messages) {
    const candidates = candidatesOf(message);
    if (candidates.length === 0) continue;
    const frozen: Candidate[] = [];
    const fresh: Candidate[] = [];
    for (const c of candidates) {
      if (state.replacements.has(c.toolUseId)) continue;
      if (state.seenIds.has(c.toolUseId)) frozen.push(c);
      else if (opts.skipToolNames.has(toolNames.get(c.toolUseId) ?? '')) markSeen(c.toolUseId);
      else fresh.push(c);
    }
    if (fresh.length === 0) continue;
    const frozenSize = sum(frozen);
    const selected = frozenSize + sum(fresh) > opts.limit ? selectLargestUntilFits(fresh, frozenSize, opts.limit) : [];
    const selectedIds = new Set(selected.map((c) => c.toolUseId));
    for (const c of fresh) if (!selectedIds.has(c.toolUseId)) markSeen(c.toolUseId);
    toPersist.push(...selected);
  }

  // Sequential on purpose: the decisions are recorded in a stable order.
  for (const c of toPersist) {
    const replacement = await opts.persist(c.toolUseId, c.content);
    if (replacement === null) {
      markSeen(c.toolUseId);
      continue;
    }
    state.seenIds.add(c.toolUseId);
    state.replacements.set(c.toolUseId, replacement);
    decisions.replaced.push({ toolUseId: c.toolUseId, replacement });
  }
  return { messages: applyReplacements(messages, state.replacements), decisions };
}

/**
 * The largest fresh results, until frozen + remaining fresh fits. Ties keep message order
 * (a stable sort), so the choice depends on nothing but the messages. If the frozen results
 * alone are over the limit the overage is accepted; compaction deals with it.
 */
function selectLargestUntilFits(fresh: Candidate[], frozenSize: number, limit: number): Candidate[] {
  const sorted = [...fresh].sort((a, b) => b.size - a.size);
  const selected: Candidate[] = [];
  let remaining = frozenSize + sum(fresh);
  for (const c of sorted) {
    if (remaining <= limit) break;
    selected.push(c);
    remaining -= c.size;
  }
  return selected;
}

/** Messages with every recorded replacement applied; untouched messages are passed through. */
export function applyReplacements(messages: readonly MessageParam[], replacements: ReadonlyMap<string, string>): MessageParam[] {
  if (replacements.size === 0) return [...messages];
  return messages.map((message) => {
    if (message.role !== 'user' || typeof message.content === 'string') return message;
    if (!message.content.some((b) => b.type === 'tool_result' && replacements.has(b.tool_use_id))) return message;
    return {
      ...message,
      content: message.content.map((block): ContentBlockParam => {
        if (block.type !== 'tool_result') return block;
        const replacement = replacements.get(block.tool_use_id);
        return replacement === undefined ? block : { ...block, content: replacement };
      }),
    };
  });
}

function candidatesOf(message: MessageParam): Candidate[] {
  if (message.role !== 'user' || typeof message.content === 'string') return [];
  const out: Candidate[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result' || !block.content) continue;
    if (typeof block.content === 'string' && block.content.startsWith(PERSISTED_OUTPUT_TAG)) continue;
    if (Array.isArray(block.content) && block.content.some((b) => b.type === 'image')) continue;
    out.push({ toolUseId: block.tool_use_id, content: block.content, size: contentSize(block.content) });
  }
  return out;
}

export function contentSize(content: NonNullable<ToolResultBlockParam['content']>): number {
  if (typeof content === 'string') return content.length;
  return content.reduce((n, b) => n + (b.type === 'text' ? b.text.length : 0), 0);
}

function sum(candidates: Candidate[]): number {
  return candidates.reduce((n, c) => n + c.size, 0);
}

function toolNameById(messages: readonly MessageParam[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
  }
  return names;
}
