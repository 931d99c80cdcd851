/** Helpers for comparing the request bodies the scripted model server recorded. */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function withoutCacheControl<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutCacheControl) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) if (k !== 'cache_control') out[k] = withoutCacheControl(v as Json);
    return out as T;
  }
  return value;
}

/**
 * Asserts the later request repeats the earlier one's conversation byte for byte: every message
 * but the earlier request's newest (which carried the moving cache breakpoint) appears verbatim,
 * in the raw bytes of the later body, and the newest one matches once its breakpoint is removed.
 */
export function prefixProblem(earlierRaw: string, laterRaw: string): string | undefined {
  const a = JSON.parse(earlierRaw) as { system: Json; tools: Json; messages: Json[] };
  const b = JSON.parse(laterRaw) as { system: Json; tools: Json; messages: Json[] };
  if (JSON.stringify(a.system) !== JSON.stringify(b.system)) return 'system prompt differs';
  if (JSON.stringify(a.tools) !== JSON.stringify(b.tools)) return 'tools differ';
  if (b.messages.length < a.messages.length) return `later request has fewer messages (${b.messages.length} < ${a.messages.length})`;
  const stablePart = JSON.stringify(a.messages.slice(0, -1)).slice(0, -1);
  if (!laterRaw.includes(`"messages":${stablePart}`)) return 'the bytes of the earlier messages changed';
  const last = a.messages.length - 1;
  if (JSON.stringify(withoutCacheControl(a.messages[last])) !== JSON.stringify(withoutCacheControl(b.messages[last]))) {
    return `message ${last} changed`;
  }
  return undefined;
}

/** The largest total of tool_result text in any one user message of a request. */
export function largestToolResultTotal(raw: string): number {
  const body = JSON.parse(raw) as { messages: { role: string; content: string | { type: string; content?: unknown }[] }[] };
  let max = 0;
  for (const m of body.messages) {
    if (m.role !== 'user' || typeof m.content === 'string') continue;
    let total = 0;
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      total += typeof b.content === 'string' ? b.content.length : JSON.stringify(b.content ?? '').length;
    }
    max = Math.max(max, total);
  }
  return max;
}

/**
 * The exact bytes of a top-level member's value in a raw JSON object (`"system"` → its array or
 * string as sent), found by scanning, not by parsing and re-serialising.
 */
export function rawMember(raw: string, key: string): string | undefined {
  let depth = 0;
  let start = -1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') {
      const end = stringEnd(raw, i);
      if (depth === 1 && start < 0 && raw.slice(i + 1, end) === key && raw[end + 1] === ':') start = end + 2;
      i = end;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0 && start >= 0) return raw.slice(start, i);
    } else if (c === ',' && depth === 1 && start >= 0) return raw.slice(start, i);
  }
  return undefined;
}

/** The index of the quote closing the string that opens at `open`. */
function stringEnd(raw: string, open: number): number {
  for (let i = open + 1; i < raw.length; i++) {
    if (raw[i] === '\\') i++;
    else if (raw[i] === '"') return i;
  }
  return raw.length;
}
