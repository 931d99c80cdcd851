import type { ModelClient } from './model-client.ts';
import { APIConnectionError, APIError, APIUserAbortError, InternalServerError, OverloadedError, RateLimitError } from '@anthropic-ai/sdk/core/error';
import type { ContentBlock, MessageParam, TextBlockParam, Tool as ApiTool } from '@anthropic-ai/sdk/resources/messages';
import { errorMessage } from '../shared/errors.ts';
import { streamModel, type ModelRequest, type ModelStreamEvent } from './model-stream.ts';
import { PartialResponse } from './partial-response.ts';

/** Consecutive overloaded answers after which a configured fallback model takes over. */
export const MAX_OVERLOADED_BEFORE_FALLBACK = 3;
export const MAX_RETRY_DELAY_MS = 32_000;

export type ModelCallEvent =
  | ModelStreamEvent
  /** An attempt failed in a way worth retrying; the next one starts after `delayMs`. */
  | { type: 'retry'; attempt: number; delayMs: number; status?: number; error: string }
  /** A stream broke after part of a message arrived: that part is void (record it as a tombstone, never send it again). */
  | { type: 'tombstone'; content: ContentBlock[]; error: string }
  /** The caller's signal stopped the call after part of a message arrived: that part (the call throws next). */
  | { type: 'aborted'; content: ContentBlock[] }
  /** The primary model stayed overloaded; the rest of the call uses `to`. */
  | { type: 'fallback'; from: string; to: string };

export interface ModelCallOptions {
  client: ModelClient;
  request: ModelRequest;
  signal: AbortSignal;
  /** Retries beyond the first attempt. The SDK's own retries must be off (maxRetries: 0) so these are the only ones. */
  maxRetries: number;
  baseDelayMs: number;
  fallbackModel?: string;
  /** Prompt-cache breakpoints on the system prompt, the tools and the latest message (default on). */
  cache?: boolean;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * One model call as the query loop wants it: streamed, with prompt-cache breakpoints, retried
 * with exponential backoff on overloaded / rate-limit / 5xx / connection errors, moving to the
 * fallback model when the primary stays overloaded. A stream that breaks mid-message yields a
 * tombstone for what had arrived before the retry; one stopped by the caller's signal yields
 * what had arrived as `aborted` before the abort error is thrown. Errors that cannot be retried (or that are
 * still failing when the retries run out) are thrown, once, after recovery was tried.
 */
export async function* callModel(opts: ModelCallOptions): AsyncGenerator<ModelCallEvent> {
  const sleep = opts.sleep ?? abortableSleep;
  let model = opts.request.model;
  let overloadedInARow = 0;
  for (let attempt = 1; ; attempt++) {
    const request = opts.cache === false ? { ...opts.request, model } : withCacheBreakpoints({ ...opts.request, model });
    const partial = new PartialResponse();
    try {
      for await (const event of streamModel(opts.client, request, opts.signal)) {
        partial.add(event);
        yield event;
      }
      return;
    } catch (err) {
      if (opts.signal.aborted || err instanceof APIUserAbortError) {
        // The SDK (1.14) ends an aborted stream quietly, so what arrived usually comes back as the
        // message; should an abort be thrown mid-stream, calls that started still need their blocks.
        if (partial.started) yield { type: 'aborted', content: partial.content() };
        throw err;
      }
      if (partial.started) yield { type: 'tombstone', content: partial.content(), error: errorMessage(err) };
      if (!isRetryable(err) || attempt > opts.maxRetries) throw err;
      overloadedInARow = isOverloaded(err) ? overloadedInARow + 1 : 0;
      if (overloadedInARow >= MAX_OVERLOADED_BEFORE_FALLBACK && opts.fallbackModel && model !== opts.fallbackModel) {
        yield { type: 'fallback', from: model, to: opts.fallbackModel };
        model = opts.fallbackModel;
        overloadedInARow = 0;
      }
      const delayMs = retryDelayMs(attempt, opts.baseDelayMs, err);
      yield { type: 'retry', attempt, delayMs, status: err instanceof APIError ? err.status : undefined, error: errorMessage(err) };
      await sleep(delayMs, opts.signal);
    }
  }
}

/**
 * Worth another attempt: connection failures and timeouts, 408, 409, 429, any 5xx (529
 * overloaded included), and a stream that broke mid-way (the SDK surfaces that as a plain error,
 * not an APIError). On Bedrock also the throttling, unavailable and stream exceptions it sends
 * inside a stream. Client errors (400, 401, 403, 404, 413...) are not.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError || err instanceof RateLimitError || err instanceof InternalServerError) return true;
  if (err instanceof APIError) {
    if (err.type === 'overloaded_error') return true;
    if (BEDROCK_RETRYABLE.has(bedrockErrorType(err) ?? '')) return true;
    return err.status === 408 || err.status === 409 || (typeof err.status === 'number' && err.status >= 500);
  }
  // A stop by the caller's signal never gets here: callModel checks `signal.aborted` first.
  return err instanceof Error;
}

/** The request did not fit the context window: recoverable by compacting, not by retrying. */
export function isPromptTooLong(err: unknown): boolean {
  if (!(err instanceof APIError)) return false;
  if (err.status === 413) return true;
  // Bedrock answers a ValidationException with either wording.
  return err.status === 400 && /prompt is too long|input is too long/i.test(err.message);
}

/**
 * The model itself has no capacity: the signal to move to the fallback model. Anthropic says 529
 * `overloaded_error`; Bedrock says ServiceUnavailableException (503, or mid-stream). Bedrock's
 * ThrottlingException is the account's quota, a rate limit: retried, but no reason to switch.
 */
function isOverloaded(err: unknown): boolean {
  if (err instanceof OverloadedError) return true;
  if (!(err instanceof APIError)) return false;
  return err.status === 529 || err.type === 'overloaded_error' || bedrockErrorType(err) === 'serviceunavailableexception';
}

/**
 * Bedrock's exceptions worth another attempt, lower-cased. Its HTTP errors name themselves in
 * the `x-amzn-errortype` header (`ThrottlingException:http://...`); inside a stream the
 * Bedrock SDK turns an exception frame into an SSE error whose type is the camel-cased name.
 */
const BEDROCK_RETRYABLE = new Set([
  'throttlingexception',
  'serviceunavailableexception',
  'internalserverexception',
  'modelstreamerrorexception',
  'modelnotreadyexception',
  'modeltimeoutexception',
]);

function bedrockErrorType(err: APIError): string | undefined {
  const named = err.headers?.get('x-amzn-errortype')?.split(':')[0] ?? err.type ?? undefined;
  return named?.toLowerCase();
}

/** 2^(attempt-1) × base, capped, with up to 25% jitter; a retry-after header from the server wins. */
export function retryDelayMs(attempt: number, baseDelayMs: number, err: unknown): number {
  const retryAfter = err instanceof APIError ? err.headers?.get('retry-after') : null;
  const seconds = retryAfter ? Number(retryAfter) : NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_DELAY_MS);
  const base = Math.min(baseDelayMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
  return Math.round(base + Math.random() * 0.25 * base);
}

const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * Cache breakpoints on the three things that repeat between calls: the system prompt, the tool
 * list (its last tool covers them all) and the conversation up to its newest message. Copies are
 * made; the caller's messages are never changed, so the bytes of earlier messages in the next
 * request are the same as in this one.
 */
export function withCacheBreakpoints(request: ModelRequest): ModelRequest {
  const system: TextBlockParam[] | undefined =
    typeof request.system === 'string'
      ? [{ type: 'text', text: request.system, cache_control: EPHEMERAL }]
      : request.system?.map((b, i, all) => (i === all.length - 1 ? { ...b, cache_control: EPHEMERAL } : b));
  const tools = request.tools?.map((t, i, all) => (i === all.length - 1 ? ({ ...t, cache_control: EPHEMERAL } as ApiTool) : t));
  const messages = request.messages.map((m, i, all) => (i === all.length - 1 ? withLastBlockCached(m) : m));
  return { ...request, ...(system ? { system } : {}), ...(tools ? { tools } : {}), messages };
}

function withLastBlockCached(message: MessageParam): MessageParam {
  if (typeof message.content === 'string') {
    return { ...message, content: [{ type: 'text', text: message.content, cache_control: EPHEMERAL }] };
  }
  const blocks = message.content;
  const lastIndex = blocks.length - 1;
  const last = blocks[lastIndex];
  if (!last || last.type === 'thinking' || last.type === 'redacted_thinking') return message;
  return { ...message, content: blocks.map((b, i) => (i === lastIndex ? { ...b, cache_control: EPHEMERAL } : b)) } as MessageParam;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new APIUserAbortError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
