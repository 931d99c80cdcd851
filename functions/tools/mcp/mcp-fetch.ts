import { errorMessage } from '../../shared/errors.ts';
import { createOutboundFetch, type OutboundFetch } from '../../outbound/outbound-fetch.ts';
import type { OutboundPolicy } from '../../outbound/outbound-policy.ts';

/** The longest answer read from an MCP server in one HTTP response (a tool result far above the context's budget). */
export const MAX_MCP_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * The fetch the MCP SDK's transports use: the outbound policy's, with the body of an error answer
 * (4xx, 5xx) dropped before the SDK reads it, because the SDK quotes that body in its error
 * text, which would carry the server's bytes into a tool result. The status stays.
 */
export function createMcpFetch(outbound: OutboundPolicy): OutboundFetch {
  const fetch = createOutboundFetch(outbound, { maxResponseBytes: MAX_MCP_ANSWER_BYTES });
  return async (input, init) => {
    const res = await fetch(input, init);
    if (res.status < 400) return res;
    await res.body?.cancel();
    return new Response(null, { status: res.status, headers: res.headers });
  };
}

/**
 * An MCP failure as a tool result or log line may say it. The SDK parses answers with
 * `JSON.parse`, whose message quotes the bytes it choked on: those become a fixed sentence.
 */
export function mcpFailureText(err: unknown): string {
  if (err instanceof SyntaxError) return 'the server answered a body that is not valid JSON';
  return errorMessage(err);
}
