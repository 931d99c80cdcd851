import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { DEFAULT_HOOK_TIMEOUT_MS, HOOK_EVENTS, hookOutputSchema, type HookDefinition, type HookOutput } from './types.ts';

export const SIGNATURE_HEADER = 'x-stratus-signature';
export const TIMESTAMP_HEADER = 'x-stratus-timestamp';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An HTTP hook as sessions and projects configure it. HTTPS is required except on loopback. */
export const httpHookConfigSchema = z.strictObject({
  event: z.enum(HOOK_EVENTS),
  matcher: z.string().max(500).optional(),
  url: z
    .string()
    .url()
    .refine((u) => {
      const url = new URL(u);
      return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
    }, 'must be an https:// URL'),
  /** Shared secret for the HMAC-SHA256 signature of each request. */
  secret: z.string().min(16).max(500),
  timeoutMs: z.number().int().min(100).max(60_000).default(DEFAULT_HOOK_TIMEOUT_MS),
  failMode: z.enum(['open', 'closed']).default('open'),
});
export type HttpHookConfig = z.output<typeof httpHookConfigSchema>;

/**
 * `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`: the receiver recomputes it with the shared
 * secret and rejects stale timestamps, so a captured request cannot be replayed later.
 */
export function signHookRequest(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** A hook that POSTs its input as JSON and reads a HookOutput back (an empty body means "carry on"). */
export function createHttpHook(config: HttpHookConfig, opts: { fetch?: typeof fetch; clock?: () => number } = {}): HookDefinition {
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? Date.now;
  return {
    name: `${config.event}:${new URL(config.url).host}`,
    event: config.event,
    matcher: config.matcher,
    timeoutMs: config.timeoutMs,
    failMode: config.failMode,
    async run(input, signal): Promise<HookOutput | void> {
      const body = JSON.stringify(input);
      const timestamp = String(Math.floor(clock() / 1000));
      const res = await doFetch(config.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signHookRequest(config.secret, timestamp, body),
        },
        body,
        signal,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`hook endpoint answered ${res.status}`);
      if (text.trim() === '') return;
      const parsed = hookOutputSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`hook endpoint answered an invalid body: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
      return parsed.data;
    },
  };
}
