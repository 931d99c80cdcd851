import { createHash } from 'node:crypto';
import type { ContentBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { StoredMessage } from '../stores/message-store.ts';

/** The Claude Code release whose transcript format this writes and reads. */
export const CLAUDE_CODE_VERSION = '2.1.88';

/**
 * A UUID (the form Claude Code uses for session and message ids) derived from one of ours, so
 * exporting the same session twice gives the same file.
 */
export function uuidFrom(id: string): string {
  const h = createHash('sha256').update(id).digest('hex').split('');
  h[12] = '4';
  h[16] = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}

/**
 * A session's log as a Claude Code transcript (`~/.claude/projects/<project>/<sessionId>.jsonl`):
 * one JSON object per line, user and assistant entries chained by parentUuid, compact
 * boundaries as system entries that restart the chain, replacement decisions as
 * content-replacement entries. Tombstones are left out: they were never part of the conversation.
 */
export function toClaudeJsonl(sessionId: string, log: readonly StoredMessage[], cwd: string): string {
  const session = uuidFrom(sessionId);
  const common: EntryCommon = { isSidechain: false, userType: 'external', cwd, sessionId: session, version: CLAUDE_CODE_VERSION };
  const lines: string[] = [];
  let parent: string | null = null;
  const { boundaryAt, committed } = completedCompactions(log);
  for (const m of log) {
    if (m.compactionId && !committed.has(m.compactionId)) continue; // a compaction that never finished
    const replaced = m.decisions?.replaced ?? [];
    if (replaced.length > 0) {
      lines.push(JSON.stringify({ type: 'content-replacement', sessionId: session, replacements: replaced.map((r) => ({ kind: 'tool-result', ...r })) }));
    }
    const boundary = boundaryAt.get(m.seq);
    if (boundary) {
      const uuid = uuidFrom(boundary.uuid);
      lines.push(
        JSON.stringify({
          parentUuid: null,
          logicalParentUuid: parent,
          ...common,
          type: 'system',
          subtype: 'compact_boundary',
          content: 'Conversation compacted',
          isMeta: false,
          timestamp: boundary.createdAt,
          uuid,
          level: 'info',
          compactMetadata: {
            trigger: boundary.compact!.trigger,
            preTokens: boundary.compact!.preTokens,
            messagesSummarized: boundary.compact!.messagesSummarized,
          },
        }),
      );
      parent = uuid;
    }
    if (m.kind === 'tombstone' || m.kind === 'compact_boundary') continue;
    const uuid = uuidFrom(m.uuid);
    lines.push(JSON.stringify(m.role === 'assistant' ? assistantEntry(m, uuid, parent, common) : userEntry(m, uuid, parent, common)));
    parent = uuid;
  }
  return lines.map((l) => `${l}\n`).join('');
}

type EntryCommon = { isSidechain: boolean; userType: string; cwd: string; sessionId: string; version: string };

/** Completed compactions by their first item (the boundary entry goes right before it), and their ids. */
function completedCompactions(log: readonly StoredMessage[]): { boundaryAt: Map<number, StoredMessage>; committed: Set<string> } {
  const boundaryAt = new Map<number, StoredMessage>();
  const committed = new Set<string>();
  for (const m of log) {
    if (m.kind === 'compact_boundary' && m.compact) {
      boundaryAt.set(m.compact.startSeq, m);
      if (m.compactionId) committed.add(m.compactionId);
    }
  }
  return { boundaryAt, committed };
}

function assistantEntry(m: StoredMessage, uuid: string, parent: string | null, common: EntryCommon) {
  const usage = m.usage ?? { inputTokens: 0, outputTokens: 0 };
  return {
    parentUuid: parent,
    ...common,
    type: 'assistant',
    uuid,
    timestamp: m.createdAt,
    message: {
      id: `msg_${uuid.replace(/-/g, '').slice(0, 24)}`,
      type: 'message',
      role: 'assistant',
      model: m.model ?? 'unknown',
      content: m.content,
      stop_reason: m.stopReason ?? null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.inputTokens,
        output_tokens: usage.outputTokens,
        cache_creation_input_tokens: usage.cacheCreationInputTokens ?? 0,
        cache_read_input_tokens: usage.cacheReadInputTokens ?? 0,
      },
    },
  };
}

function userEntry(m: StoredMessage, uuid: string, parent: string | null, common: EntryCommon) {
  return {
    parentUuid: parent,
    ...common,
    type: 'user',
    uuid,
    timestamp: m.createdAt,
    message: { role: 'user', content: userContent(m.content) },
    ...(m.kind === 'compact_summary' ? { isCompactSummary: true, isVisibleInTranscriptOnly: true } : {}),
    ...(m.kind === 'synthetic' && !m.content.some((b) => b.type === 'tool_result') ? { isMeta: true } : {}),
  };
}

/** A prompt that is one text block is written as a string, as Claude Code writes prompts. */
function userContent(content: ContentBlockParam[]): string | ContentBlockParam[] {
  const only = content.length === 1 ? content[0] : undefined;
  return only?.type === 'text' ? only.text : content;
}

/** One conversation item read from a transcript, in order. */
export type ImportedItem =
  | { kind: 'message'; role: 'user' | 'assistant'; content: ContentBlockParam[]; compactSummary: boolean; model?: string; stopReason?: string | null }
  | { kind: 'boundary'; trigger: 'auto' | 'manual'; preTokens: number }
  | { kind: 'replacements'; replaced: { toolUseId: string; replacement: string }[] };

/**
 * Reads a Claude Code transcript: main-chain user and assistant entries in file order (the
 * entries Claude Code writes per content block of one response, sharing its message id, become
 * one message), compact boundaries and content-replacement records. Everything else (queue
 * operations, summaries, sidechains) is skipped. Throws with the line number on bad JSON.
 */
export function parseClaudeJsonl(text: string): ImportedItem[] {
  const items: ImportedItem[] = [];
  let lastAssistantId: string | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    const entry = parseLine(line, i);
    if (!entry || typeof entry !== 'object' || entry.isSidechain === true) continue;
    if (entry.type === 'system' && entry.subtype === 'compact_boundary') {
      const meta = entry.compactMetadata ?? {};
      items.push({ kind: 'boundary', trigger: meta.trigger === 'auto' ? 'auto' : 'manual', preTokens: Number(meta.preTokens) || 0 });
      lastAssistantId = undefined;
    } else if (entry.type === 'content-replacement' && Array.isArray(entry.replacements)) {
      const replaced = entry.replacements
        // biome-ignore lint/suspicious/noExplicitAny: foreign JSON, checked by this filter
        .filter((r: any) => r?.kind === 'tool-result' && typeof r.toolUseId === 'string' && typeof r.replacement === 'string')
        // biome-ignore lint/suspicious/noExplicitAny: the entries the filter above checked
        .map((r: any) => ({ toolUseId: r.toolUseId, replacement: r.replacement }));
      if (replaced.length) items.push({ kind: 'replacements', replaced });
    } else if ((entry.type === 'user' || entry.type === 'assistant') && entry.message) {
      const content: ContentBlockParam[] =
        typeof entry.message.content === 'string'
          ? [{ type: 'text', text: entry.message.content }]
          : Array.isArray(entry.message.content)
            ? entry.message.content
            : [];
      if (content.length === 0) continue;
      const last = items[items.length - 1];
      if (entry.type === 'assistant' && entry.message.id && entry.message.id === lastAssistantId && last?.kind === 'message') {
        last.content.push(...content);
        last.stopReason = entry.message.stop_reason ?? last.stopReason;
        continue;
      }
      lastAssistantId = entry.type === 'assistant' ? entry.message.id : undefined;
      items.push({
        kind: 'message',
        role: entry.type,
        content,
        compactSummary: entry.isCompactSummary === true,
        ...(entry.type === 'assistant' ? { model: entry.message.model, stopReason: entry.message.stop_reason ?? null } : {}),
      });
    }
  }
  return items;
}

// biome-ignore lint/suspicious/noExplicitAny: a transcript line is foreign JSON; each field is checked where it is read
function parseLine(line: string, index: number): any {
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`line ${index + 1} is not JSON`);
  }
}
