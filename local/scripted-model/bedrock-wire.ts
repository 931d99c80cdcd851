import { EventStreamCodec } from '@smithy/core/event-streams';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * Amazon Bedrock Runtime's side of the wire, for the scripted model server: the
 * InvokeModelWithResponseStream answer framed as `application/vnd.amazon.eventstream` (each
 * Messages stream event base64-encoded in a `chunk` event, encoded with the AWS SDK's own
 * event-stream codec), exception frames for errors inside a stream, and the HTTP errors Bedrock
 * answers with (`x-amzn-errortype` header, `{"message"}` body). The Messages events themselves
 * are the same ones the Anthropic side streams, so one script drives both.
 */

/** `POST /model/{modelId}/invoke-with-response-stream` (and `/invoke`): the model id from the path. */
export function bedrockRoute(pathname: string): { modelId: string; stream: boolean } | undefined {
  const match = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(pathname);
  return match ? { modelId: decodeURIComponent(match[1]!), stream: match[2] === 'invoke-with-response-stream' } : undefined;
}

/**
 * What Bedrock rejects before the model sees the body: it carries the model in the path and the
 * API version in the body, so `model` and `stream` keys are extraneous and `anthropic_version`
 * is required.
 */
export function bedrockBodyProblem(body: Record<string, unknown>): string | undefined {
  for (const key of ['model', 'stream']) if (key in body) return `extraneous key [${key}] is not permitted`;
  if (typeof body.anthropic_version !== 'string') return 'required key [anthropic_version] not found';
  return undefined;
}

/** The Bedrock exception for an Anthropic error a script asks for (by status, the type where the status is shared). */
export function bedrockException(status: number, type: string): { status: number; name: string } {
  if (status === 529 || type === 'overloaded_error') return { status: 503, name: 'ServiceUnavailableException' };
  if (status === 429) return { status: 429, name: 'ThrottlingException' };
  if (status === 401 || status === 403) return { status: 403, name: 'AccessDeniedException' };
  if (status === 404) return { status: 404, name: 'ResourceNotFoundException' };
  if (status === 408) return { status: 408, name: 'ModelTimeoutException' };
  if (status >= 500) return { status, name: status === 503 ? 'ServiceUnavailableException' : 'InternalServerException' };
  return { status: 400, name: 'ValidationException' };
}

export function writeBedrockError(res: ServerResponse, status: number, name: string, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': requestId(),
  });
  res.end(JSON.stringify({ message }));
}

const utf8 = new TextEncoder();
const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => utf8.encode(text),
);
const str = (value: string) => ({ type: 'string' as const, value });

export function startBedrockStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'application/vnd.amazon.eventstream',
    'x-amzn-bedrock-content-type': 'application/json',
    'x-amzn-requestid': requestId(),
  });
}

/** One Messages stream event in a `chunk` frame, padded as Bedrock pads (`p`) so sizes do not leak content lengths. */
export function bedrockChunkFrame(event: unknown): Uint8Array {
  const bytes = Buffer.from(JSON.stringify(event)).toString('base64');
  const body = JSON.stringify({ bytes, p: 'abcdefghijklmnopqrstuvwxyz'.slice(0, 1 + (bytes.length % 26)) });
  return codec.encode({
    headers: { ':event-type': str('chunk'), ':content-type': str('application/json'), ':message-type': str('event') },
    body: utf8.encode(body),
  });
}

/** An exception frame: how Bedrock fails a stream that already started (camel-cased exception name). */
export function bedrockExceptionFrame(name: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': str(name.charAt(0).toLowerCase() + name.slice(1)),
      ':content-type': str('application/json'),
      ':message-type': str('exception'),
    },
    body: utf8.encode(JSON.stringify({ message })),
  });
}

/** Bedrock appends its own accounting to the last event of a stream. */
export function withInvocationMetrics(event: { type: string }, usage: { input_tokens: number; output_tokens: number }, startedAt: number): unknown {
  if (event.type !== 'message_stop') return event;
  const latency = Date.now() - startedAt;
  return {
    ...event,
    'amazon-bedrock-invocationMetrics': {
      inputTokenCount: usage.input_tokens,
      outputTokenCount: usage.output_tokens,
      invocationLatency: latency,
      firstByteLatency: latency,
    },
  };
}

function requestId(): string {
  return randomBytes(16)
    .toString('hex')
    .replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-');
}
