import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './net/listen.ts';
import type { EmbeddedServer } from './dynamo-server.ts';
import type { TenantIsolatedFunction } from './tenant-worker-pool.ts';

export type LocalFunction = (event: unknown) => Promise<unknown>;

/** The header the SDK sends an Invoke's `TenantId` in (@aws-sdk/client-lambda's serializer). */
const TENANT_HEADER = 'x-amz-tenant-id';
/** Lambda's constraint on a tenant id (API reference, Invoke): 1–256 of these characters. */
const TENANT_ID = /^[a-zA-Z0-9._:/=+\-@ ]{1,256}$/;

const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/;
/** Lambda's cap on a synchronous invocation's request and response payloads (6 MB). */
export const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;

/**
 * Serves functions over the Lambda Invoke API so the harness calls them with the real
 * @aws-sdk/client-lambda, exactly as in AWS: RequestResponse (200 + payload), Event (202, run
 * in the background), DryRun (204), a handler error as 200 + `X-Amz-Function-Error: Unhandled`,
 * an unknown function as 404 ResourceNotFoundException, and Lambda's 6 MB payload cap (a larger
 * request is 413 RequestTooLargeException; a larger response, a Function.ResponseSizeTooLarge
 * function error), so what works locally also fits in AWS.
 *
 * Tenant isolation as in AWS: a function registered as a TenantIsolatedFunction (one process per
 * tenant id, tenant-worker-pool.ts) gets the invoke's `X-Amz-Tenant-Id`; invoking it without one,
 * or invoking any other function with one, is refused with InvalidParameterValueException, as
 * Lambda refuses both.
 */
export async function startLambdaInvokeServer(opts: {
  functions: Record<string, LocalFunction | TenantIsolatedFunction>;
  port?: number;
  onBackgroundError?: (name: string, err: unknown) => void;
}): Promise<EmbeddedServer & { pending(): Promise<void> }> {
  const background = new Set<Promise<unknown>>();

  const server = createServer(async (req, res) => {
    const match = req.method === 'POST' ? INVOKE_PATH.exec(new URL(req.url ?? '/', 'http://local').pathname) : null;
    if (!match) return send(res, 404, { 'x-amzn-errortype': 'UnknownOperationException' }, { message: 'Unknown operation' });
    const name = decodeURIComponent(match[1]!).split(':').pop()!;
    const fn = opts.functions[name];
    const body = await readBody(req);
    if (!fn) {
      return send(res, 404, { 'x-amzn-errortype': 'ResourceNotFoundException' }, {
        Type: 'User',
        message: `Function not found: ${name}`,
      });
    }
    let event: unknown;
    try {
      event = body.length ? JSON.parse(body.toString('utf8')) : {};
    } catch {
      return send(res, 400, { 'x-amzn-errortype': 'InvalidRequestContentException' }, { message: 'Could not parse request body into json' });
    }
    const tenantId = req.headers[TENANT_HEADER];
    const isolated = typeof fn !== 'function';
    if (typeof tenantId === 'string' && !TENANT_ID.test(tenantId)) {
      return send(res, 400, { 'x-amzn-errortype': 'InvalidParameterValueException' }, {
        Type: 'User',
        message: 'The tenant id must be 1-256 characters of letters, digits, spaces and ._:/=+-@',
      });
    }
    if (isolated !== (tenantId !== undefined)) {
      return send(res, 400, { 'x-amzn-errortype': 'InvalidParameterValueException' }, {
        Type: 'User',
        message: isolated
          ? `Function ${name} uses tenant isolation mode: the invocation needs a tenant id.`
          : `Function ${name} does not use tenant isolation mode: the invocation must not carry a tenant id.`,
      });
    }
    const run = isolated ? () => fn.invoke(tenantId as string, event) : () => fn(event);
    const type = req.headers['x-amz-invocation-type'] ?? 'RequestResponse';
    if (type !== 'Event' && body.length > MAX_SYNC_PAYLOAD_BYTES) {
      return send(res, 413, { 'x-amzn-errortype': 'RequestTooLargeException' }, {
        Type: 'User',
        message: `${body.length} byte payload is too large for the RequestResponse invocation type (${MAX_SYNC_PAYLOAD_BYTES} byte limit)`,
      });
    }
    if (type === 'DryRun') return send(res, 204, {}, undefined);
    if (type === 'Event') {
      const job = run().catch((err: unknown) => opts.onBackgroundError?.(name, err));
      background.add(job);
      void job.finally(() => background.delete(job));
      return send(res, 202, {}, undefined);
    }
    try {
      const result = await run();
      const size = Buffer.byteLength(JSON.stringify(result ?? null));
      if (size > MAX_SYNC_PAYLOAD_BYTES) {
        return send(res, 200, { 'x-amz-function-error': 'Unhandled' }, {
          errorType: 'Function.ResponseSizeTooLarge',
          errorMessage: `Response payload size (${size} bytes) exceeded maximum allowed payload size (${MAX_SYNC_PAYLOAD_BYTES} bytes).`,
        });
      }
      send(res, 200, { 'x-amz-executed-version': '$LATEST' }, result ?? null);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      send(res, 200, { 'x-amz-function-error': 'Unhandled' }, {
        errorType: e.name,
        errorMessage: e.message,
        trace: (e.stack ?? '').split('\n'),
      });
    }
  });
  const url = await listenOnLoopback(server, opts.port);
  return {
    url,
    close: () => closeServer(server),
    pending: async () => {
      await Promise.all([...background]);
    },
  };
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}
