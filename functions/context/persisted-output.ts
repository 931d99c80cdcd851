import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import type { BlobStore } from '../stores/blob-store.ts';
import { formatFileSize } from '../../sandbox-runner/common/file-size.ts';
import { PREVIEW_SIZE_BYTES } from './limits.ts';
import { toolResultKey } from '../stores/bucket-layout.ts';
import type { PersistedResultReader } from '../tools/tool.ts';
import { VIRTUAL_ROOT } from '../../sandbox-runner/common/virtual-paths.ts';

export const PERSISTED_OUTPUT_TAG = '<persisted-output>';
export const PERSISTED_OUTPUT_CLOSING_TAG = '</persisted-output>';
/** Where the model finds persisted results: a reserved folder the Read tool resolves from S3. */
export const PERSISTED_RESULTS_DIR = `${VIRTUAL_ROOT}/.stratus/tool-results`;

const TOOL_USE_ID = /^[A-Za-z0-9_-]{1,128}$/;

export interface PersistedToolResult {
  /** The path the model is told to Read. */
  path: string;
  originalSize: number;
  preview: string;
  hasMore: boolean;
}

/** The virtual path of a persisted result (`.json` when the content was a block array). */
export function persistedResultPath(toolUseId: string, isJson: boolean): string {
  return `${PERSISTED_RESULTS_DIR}/${toolUseId}.${isJson ? 'json' : 'txt'}`;
}

function objectKey(sessionId: string, fileName: string): string {
  return toolResultKey(sessionId, fileName);
}

/**
 * Stores a result under its tool_use_id, once: ids never repeat and a result never changes, so
 * a replay (a retried turn, a budget pass re-running) finds the object and keeps it.
 */
export async function persistToolResult(
  blobs: BlobStore,
  sessionId: string,
  toolUseId: string,
  content: NonNullable<ToolResultBlockParam['content']>,
): Promise<PersistedToolResult | { error: string }> {
  if (!TOOL_USE_ID.test(toolUseId)) return { error: `Cannot persist a result with tool_use_id ${JSON.stringify(toolUseId)}` };
  const isJson = Array.isArray(content);
  if (isJson && content.some((b) => b.type !== 'text')) return { error: 'Cannot persist tool results containing non-text content' };
  const text = isJson ? JSON.stringify(content, null, 2) : (content as string);
  const fileName = `${toolUseId}.${isJson ? 'json' : 'txt'}`;
  try {
    await blobs.putIfAbsent(objectKey(sessionId, fileName), text, isJson ? 'application/json' : undefined);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
  const { preview, hasMore } = generatePreview(text, PREVIEW_SIZE_BYTES);
  return { path: persistedResultPath(toolUseId, isJson), originalSize: text.length, preview, hasMore };
}

/** What the model sees instead of a persisted result. */
export function buildLargeToolResultMessage(result: PersistedToolResult): string {
  return (
    `${PERSISTED_OUTPUT_TAG}\n` +
    `Output too large (${formatFileSize(result.originalSize)}). Full output saved to: ${result.path}\n\n` +
    `Preview (first ${formatFileSize(PREVIEW_SIZE_BYTES)}):\n` +
    result.preview +
    (result.hasMore ? '\n...\n' : '\n') +
    PERSISTED_OUTPUT_CLOSING_TAG
  );
}

/** The first `maxChars`, cut at the last newline when that keeps at least half. */
export function generatePreview(content: string, maxChars: number): { preview: string; hasMore: boolean } {
  if (content.length <= maxChars) return { preview: content, hasMore: false };
  const truncated = content.slice(0, maxChars);
  const lastNewline = truncated.lastIndexOf('\n');
  const cut = lastNewline > maxChars * 0.5 ? lastNewline : maxChars;
  return { preview: content.slice(0, cut), hasMore: true };
}

/** The Read tool's hook for paths in the reserved folder (its contract is the tools' own). */
export type { PersistedResultReader };

export function createPersistedResultReader(blobs: BlobStore, sessionId: string): PersistedResultReader {
  const prefix = `${PERSISTED_RESULTS_DIR}/`;
  return {
    owns: (path) => path.startsWith(prefix),
    async read(path) {
      const fileName = path.slice(prefix.length);
      const match = /^([A-Za-z0-9_-]{1,128})\.(txt|json)$/.exec(fileName);
      if (!match) return undefined;
      return blobs.get(objectKey(sessionId, fileName));
    },
  };
}

/**
 * A persisted result by its tool_use id, for the API (a person opening the full output the log
 * only previews): the text and whether it was stored as a JSON block array; undefined when the
 * session persisted no result under that id.
 */
export async function readPersistedResult(blobs: BlobStore, sessionId: string, toolUseId: string): Promise<{ text: string; isJson: boolean } | undefined> {
  if (!TOOL_USE_ID.test(toolUseId)) return undefined;
  for (const isJson of [false, true]) {
    const text = await blobs.get(objectKey(sessionId, `${toolUseId}.${isJson ? 'json' : 'txt'}`));
    if (text !== undefined) return { text, isJson };
  }
  return undefined;
}
