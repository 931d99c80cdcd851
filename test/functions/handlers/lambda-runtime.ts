import type { Context } from 'aws-lambda';
import { Writable } from 'node:stream';

/**
 * What the Node.js Lambda runtime provides to a streaming handler, for running handlers in
 * tests: the `awslambda` globals (docs/local-stack.md: define them before importing a streaming
 * handler), a Function URL event (payload format 2.0), a context and a response stream.
 */
export function installAwsLambdaGlobals(): void {
  (globalThis as { awslambda?: unknown }).awslambda = {
    // The real runtime marks the function as streaming and returns it unchanged.
    streamifyResponse: <T>(handler: T) => handler,
    HttpResponseStream: {
      from(stream: ResponseCapture, metadata: { statusCode: number; headers?: Record<string, string> }) {
        stream.metadata = metadata;
        return stream;
      },
    },
  };
}

export class ResponseCapture extends Writable {
  metadata?: { statusCode: number; headers?: Record<string, string> };
  readonly chunks: string[] = [];
  readonly finished: Promise<void>;

  constructor() {
    super();
    this.finished = new Promise((resolve) => this.on('finish', () => resolve()));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.chunks.push(chunk.toString('utf8'));
    callback();
  }

  get text(): string {
    return this.chunks.join('');
  }
}

export function lambdaContext(remainingMs: number, invokedFunctionArn = 'arn:aws:lambda:eu-west-1:123456789012:function:stratus-test-api'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'stratus-test-api',
    functionVersion: '$LATEST',
    invokedFunctionArn,
    memoryLimitInMB: '1024',
    awsRequestId: 'req-1',
    logGroupName: '/aws/lambda/stratus-test-api',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => remainingMs,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export function functionUrlEvent(method: string, pathAndQuery: string, opts: { headers?: Record<string, string>; body?: unknown } = {}) {
  const [rawPath, rawQueryString = ''] = pathAndQuery.split('?');
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { host: 'abc123.lambda-url.eu-west-1.on.aws', ...opts.headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abc123',
      domainName: 'abc123.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'abc123',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'vitest' },
      requestId: 'req-1',
      routeKey: '$default',
      stage: '$default',
      time: '29/Nov/2026:19:00:00 +0000',
      timeEpoch: 1_795_979_600_000,
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    isBase64Encoded: false,
  };
}
