import { createHmac } from 'node:crypto';
import { z } from 'zod';
import type { OutboundFetch } from '../outbound/outbound-fetch.ts';
import { DEFAULT_HOOK_TIMEOUT_MS, HOOK_EVENTS, hookOutputSchema, type HookDefinition, type HookOutput } from './types.ts';

/** @internal exported for the tests that verify a hook request as its endpoint would */
export const SIGNATURE_HEADER = 'x-stratus-signature';
/** @internal as SIGNATURE_HEADER */
export const TIMESTAMP_HEADER = 'x-stratus-timestamp';

/** The longest hook answer read; a HookOutput is a few KB. */
export const MAX_HOOK_ANSWER_BYTES = 1024 * 1024;

/**
 * An HTTP hook as sessions and projects configure it. Where it may point is the outbound
 * policy's to say (https://, plain http:// only to a host the operator allows; functions/outbound),
 * checked when a session is configured and again at every call.
 */
export const httpHookConfigSchema = z.strictObject({
  event: z.enum(HOOK_EVENTS),
  matcher: z.string().max(500).optional(),
  url: z
    .string()
    .max(2_000)
    .url()
    .refine((u) => ['https:', 'http:'].includes(new URL(u).protocol), 'must be an https:// URL'),
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

/**
 * A hook that POSTs its input as JSON and reads a HookOutput back (an empty body means "carry
 * on"), through the outbound policy's fetch. A redirect is an error, never followed: following
 * it would resend the body and its signature to wherever the endpoint points. Failures name the
 * status or the kind of answer, never the answer's bytes (they would reach the model).
 */
export function createHttpHook(config: HttpHookConfig, opts: { fetch: OutboundFetch; clock?: () => number }): HookDefinition {
  const clock = opts.clock ?? Date.now;
  return {
    name: `${config.event}:${new URL(config.url).host}`,
    event: config.event,
    matcher: config.matcher,
    timeoutMs: config.timeoutMs,
    failMode: config.failMode,
    async run(input, signal): Promise<HookOutput | undefined> {
      const body = JSON.stringify(input);
      const timestamp = String(Math.floor(clock() / 1000));
      const res = await opts.fetch(config.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signHookRequest(config.secret, timestamp, body),
        },
        body,
        signal,
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new Error(
          res.status >= 300 && res.status < 400
            ? `hook endpoint answered a redirect (${res.status}); hooks do not follow redirects`
            : `hook endpoint answered ${res.status}`,
        );
      }
      return parseHookAnswer(await res.text());
    },
  };
}

function parseHookAnswer(text: string): HookOutput | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('hook endpoint answered a body that is not JSON');
  }
  const parsed = hookOutputSchema.safeParse(value);
  if (!parsed.success) throw new Error(`hook endpoint answered an invalid body: ${parsed.error.issues[0]?.message ?? 'unknown'}`);
  return parsed.data;
}
