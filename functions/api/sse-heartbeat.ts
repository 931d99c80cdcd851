import type { SSEStreamingApi } from 'hono/streaming';

/**
 * Sends `: heartbeat` comments on an SSE stream every `everyMs` until stopped, so proxies and
 * load balancers that close idle connections keep a quiet turn's stream open (a long Bash
 * command sends nothing for minutes). Each SSE message is one write, so a comment never lands
 * inside an event. Returns the stop function.
 */
export function startSseHeartbeat(stream: SSEStreamingApi, everyMs: number): () => void {
  const timer = setInterval(() => {
    if (stream.aborted || stream.closed) return;
    stream.write(': heartbeat\n\n').catch(() => undefined);
  }, everyMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
