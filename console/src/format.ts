import type { Schemas } from './api.ts';

const numberFormat = new Intl.NumberFormat('en');

export const formatTokens = (usage: Schemas['Usage'] | undefined | null): string =>
  usage
    ? `${numberFormat.format(usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheCreationInputTokens ?? 0))} in · ${numberFormat.format(usage.outputTokens)} out`
    : '—';

export const formatCost = (usd: number | undefined | null): string =>
  usd === undefined || usd === null ? '—' : `$${usd < 0.01 && usd > 0 ? usd.toFixed(4) : usd.toFixed(2)}`;

export const formatDuration = (ms: number): string =>
  ms < 1_000 ? `${Math.round(ms)} ms` : ms < 60_000 ? `${(ms / 1_000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;

/** "3 min ago", with the exact time in the element's title. */
export function timeAgo(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1_000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3_600)} h ago`;
  return new Date(iso).toLocaleDateString();
}

/** A tool input as people read it: a Bash command as itself, a path, or compact JSON. */
export function describeInput(name: string, input: unknown): string {
  const i = (input ?? {}) as Record<string, unknown>;
  if (name === 'Bash' && typeof i.command === 'string') return i.command;
  if (typeof i.file_path === 'string') return i.file_path;
  if (typeof i.pattern === 'string') return i.pattern;
  return JSON.stringify(input ?? {}, null, 2);
}

/** A tool result's content as text (string, or text blocks). */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join('\n');
}
