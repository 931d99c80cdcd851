import { LambdaClient } from '@aws-sdk/client-lambda';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaRunnerClient } from '../../../functions/runner-client/runner-client.ts';
import { RunnerFailedError } from '../../../functions/runner-client/runner-errors.ts';
import { runnerTenantId } from '../../../functions/runner-client/runner-tenant.ts';
import type { RunnerRequest, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { startLambdaInvokeServer } from '../../../local/lambda-invoke-server.ts';
import { closeServer, listenOnLoopback } from '../../../local/net/listen.ts';

const OK: RunnerResponse = {
  ok: true,
  result: { type: 'list_files', files: [] } as never,
  cwd: '/workspace',
  version: 3,
  changedFiles: 0,
  bytesUploaded: 0,
  sync: { mode: 'warm', changedPaths: 0 },
};

function requestFor(workspaceId: string, op: RunnerRequest['op']): RunnerRequest {
  return {
    sessionId: 'ses_1',
    workspace: { bucket: 'b', id: workspaceId, version: 3, credentials: { accessKeyId: 'k', secretAccessKey: 's' } },
    op,
  };
}

const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };

describe('runner client', () => {
  /** Tenant ids and ops the tenant-isolated runner function saw. */
  const calls: { tenantId: string; op: string }[] = [];
  /** Ops whose next call fails inside the runner with a reset, as a runner whose S3 connection dropped. */
  const failNext = new Set<string>();
  let invokeServer: Awaited<ReturnType<typeof startLambdaInvokeServer>>;
  /** In front of the Invoke server: drops the first connection on which a request arrives, unanswered. */
  let front: Server;
  let frontUrl: string;
  let dropped = 0;
  let dropNext = false;

  beforeAll(async () => {
    invokeServer = await startLambdaInvokeServer({
      functions: {
        runner: {
          tenantIsolated: true,
          async invoke(tenantId, event) {
            const op = (event as RunnerRequest).op.type;
            calls.push({ tenantId, op });
            if (failNext.delete(op)) throw new Error('socket hang up');
            return OK;
          },
        },
      },
    });
    front = createServer((req, res) => {
      if (dropNext) {
        dropNext = false;
        dropped += 1;
        req.socket.destroy();
        return;
      }
      const target = new URL(req.url ?? '/', invokeServer.url);
      const upstream = httpRequest(target, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      req.pipe(upstream);
    });
    frontUrl = await listenOnLoopback(front);
  });
  afterAll(async () => {
    await closeServer(front);
    await invokeServer.close();
  });

  /** A client whose SDK makes one attempt, so any retry seen here is the runner client's own. */
  function client(endpoint: string) {
    return createLambdaRunnerClient(async () => new LambdaClient({ region: 'us-east-1', endpoint, credentials, maxAttempts: 1 }), 'runner');
  }

  it('invokes the tenant-isolated runner with the workspace id as the tenant id, on every call', async () => {
    calls.length = 0;
    const runner = client(invokeServer.url);
    await runner.invoke(requestFor('ws_alpha', { type: 'list_files' }));
    await runner.invoke(requestFor('ws_beta', { type: 'read', file_path: '/workspace/a' } as never));
    await runner.invoke(requestFor('ws_alpha', { type: 'bash', command: 'true' } as never));
    expect(calls).toEqual([
      { tenantId: 'ws_alpha', op: 'list_files' },
      { tenantId: 'ws_beta', op: 'read' },
      { tenantId: 'ws_alpha', op: 'bash' },
    ]);
  });

  it('refuses a workspace id Lambda would not take as a tenant id, before calling anything', async () => {
    expect(runnerTenantId('ws_0mx38z9mxfa7ebe8cfda1cc73')).toBe('ws_0mx38z9mxfa7ebe8cfda1cc73');
    calls.length = 0;
    await expect(client(invokeServer.url).invoke(requestFor('ws*', { type: 'list_files' }))).rejects.toMatchObject({ code: 'bad_workspace_id' });
    await expect(client(invokeServer.url).invoke(requestFor('x'.repeat(257), { type: 'list_files' }))).rejects.toMatchObject({ code: 'bad_workspace_id' });
    expect(calls).toEqual([]);
  });

  it('sends an idempotent op again when the connection was reset before an answer, and never bash', async () => {
    const runner = client(frontUrl);
    calls.length = 0;
    dropped = 0;
    dropNext = true;
    const out = await runner.invoke(requestFor('ws_alpha', { type: 'list_files' }));
    expect(out).toEqual(OK);
    expect(dropped).toBe(1);
    expect(calls).toEqual([{ tenantId: 'ws_alpha', op: 'list_files' }]);

    dropNext = true;
    await expect(runner.invoke(requestFor('ws_alpha', { type: 'bash', command: 'echo once >> f' } as never))).rejects.toMatchObject({ code: 'ECONNRESET' });
    expect(dropped).toBe(2);
    expect(calls).toHaveLength(1);
  });

  it('sends an idempotent op again when the runner failed on a reset connection of its own, and never bash', async () => {
    const runner = client(invokeServer.url);
    calls.length = 0;
    failNext.add('create_workspace');
    const created = await runner.invoke({
      ...requestFor('ws_new', { type: 'create_workspace', files: { 'a.txt': 'a' } }),
      workspace: { ...requestFor('ws_new', { type: 'list_files' }).workspace, version: 0 },
    });
    expect(created.ok).toBe(true);
    expect(calls.map((c) => c.op)).toEqual(['create_workspace', 'create_workspace']);

    calls.length = 0;
    failNext.add('bash');
    const bash = runner.invoke(requestFor('ws_alpha', { type: 'bash', command: 'echo once >> f' } as never));
    await expect(bash).rejects.toBeInstanceOf(RunnerFailedError);
    await expect(bash).rejects.toThrow('The sandbox runner failed: Error: socket hang up');
    expect(calls.map((c) => c.op)).toEqual(['bash']);
  });
});
