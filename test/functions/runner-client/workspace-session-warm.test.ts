import { describe, expect, it } from 'vitest';
import { WorkspaceSession } from '../../../functions/runner-client/workspace-session.ts';
import type { RunnerRequest, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { memoryLogger } from '../../support/fake-tools.ts';

const answer = (request: RunnerRequest, version: number): RunnerResponse => ({
  ok: true,
  result: (request.op.type === 'warm' ? { type: 'warm', sandbox: true } : { type: 'list_files', files: [] }) as never,
  cwd: '/workspace/elsewhere',
  version,
  changedFiles: 0,
  bytesUploaded: 0,
  sync: { mode: 'warm', changedPaths: 0 },
});

function session(invoke: (request: RunnerRequest) => Promise<RunnerResponse>) {
  const logger = memoryLogger();
  const deps = {
    runner: { invoke },
    workspaceCredentials: { forWorkspace: async () => ({ accessKeyId: 'k', secretAccessKey: 's' }) },
    config: { bucket: 'bkt' },
    log: logger.log,
  };
  const ws = new WorkspaceSession({
    deps,
    sessionId: 'ses_1',
    workspace: { id: 'ws_1', version: 3 },
    cwd: '/workspace',
    env: { A: '1' },
    allowedDomains: ['example.com'],
  });
  return { ws, lines: logger.lines };
}

describe('WorkspaceSession.warm', () => {
  it("names the session's version, cwd, variables and network, and changes none of them", async () => {
    const sent: RunnerRequest[] = [];
    const { ws } = session(async (request) => (sent.push(request), answer(request, 7)));
    await ws.warm();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      op: { type: 'warm' },
      workspace: { id: 'ws_1', version: 3 },
      cwd: '/workspace',
      env: { A: '1' },
      network: { allowedDomains: ['example.com'] },
    });
    expect({ version: ws.version, cwd: ws.cwd }).toEqual({ version: 3, cwd: '/workspace' });
  });

  it('never fails: a runner that refuses or cannot be reached is logged, and the next op runs', async () => {
    const { ws, lines } = session(async (request) =>
      request.op.type === 'warm' ? { ok: false, error: { kind: 'bad_request', message: 'Invalid runner request: unknown op warm' } } : answer(request, 4),
    );
    await expect(ws.warm()).resolves.toBeUndefined();
    expect(lines).toContainEqual(expect.objectContaining({ level: 'WARN', message: expect.stringContaining('could not get the runner ready for Bash') }));
    await ws.run({ type: 'list_files' });
    expect(ws.version).toBe(4);

    const { ws: unreachable } = session(async () => Promise.reject(new Error('connect ECONNREFUSED')));
    await expect(unreachable.warm()).resolves.toBeUndefined();
  });

  it('sends an op asked for while the warm is on its way only after it, so the copy never moves back', async () => {
    const order: string[] = [];
    let releaseWarm!: () => void;
    const { ws } = session(async (request) => {
      order.push(`start ${request.op.type}`);
      if (request.op.type === 'warm') await new Promise<void>((r) => (releaseWarm = r));
      order.push(`end ${request.op.type}`);
      return answer(request, 5);
    });
    const warm = ws.warm();
    const list = ws.run({ type: 'list_files' });
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['start warm']);
    releaseWarm();
    await Promise.all([warm, list]);
    expect(order).toEqual(['start warm', 'end warm', 'start list_files', 'end list_files']);
  });
});
