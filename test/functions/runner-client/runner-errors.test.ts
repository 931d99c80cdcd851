import { describe, expect, it } from 'vitest';
import {
  decodeRunnerFailure,
  RunnerRefusedError,
  WorkspaceConflictError,
  WorkspaceInputError,
  WorkspaceLimitError,
} from '../../../functions/runner-client/runner-errors.ts';
import { runOp } from '../../../functions/runner-client/workspace-client.ts';
import { ConflictError, LimitError, RunnerError, UserError } from '../../../functions/shared/errors.ts';
import type { RunnerRequest, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { memoryLogger } from '../../support/fake-tools.ts';

describe('decodeRunnerFailure', () => {
  it('gives each refusal kind its typed error, status and code, keeping the runner message', () => {
    const { log } = memoryLogger();
    const input = decodeRunnerFailure({ ok: false, error: { kind: 'tool_error', message: 'File does not exist.' } }, log);
    expect(input).toBeInstanceOf(WorkspaceInputError);
    expect(input).toBeInstanceOf(UserError);
    expect(input).toMatchObject({ status: 400, code: 'invalid_request', message: 'File does not exist.' });

    const limit = decodeRunnerFailure({ ok: false, error: { kind: 'limit', message: 'The workspace would hold 3 files.' } }, log);
    expect(limit).toBeInstanceOf(WorkspaceLimitError);
    expect(limit).toBeInstanceOf(LimitError);
    expect(limit).toMatchObject({ status: 413, code: 'workspace_limit', message: 'The workspace would hold 3 files.' });

    const conflict = decodeRunnerFailure({ ok: false, error: { kind: 'conflict', message: 'Your change was not saved.', latestVersion: 7 } }, log);
    expect(conflict).toBeInstanceOf(WorkspaceConflictError);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'workspace_conflict', latestVersion: 7 });
  });

  it("keeps a bad request's details in the log and out of the error", () => {
    const { log, lines } = memoryLogger();
    const refused = decodeRunnerFailure({ ok: false, error: { kind: 'bad_request', message: 'op.type: Invalid input' } }, log);
    expect(refused).toBeInstanceOf(RunnerRefusedError);
    expect(refused).toBeInstanceOf(RunnerError);
    expect(refused).toMatchObject({ status: 500, code: 'internal_error', message: 'The sandbox runner refused the request; see the server logs.' });
    expect(lines).toContainEqual(expect.objectContaining({ message: 'the runner refused a request', error: 'op.type: Invalid input' }));
  });
});

describe('runOp', () => {
  const credentials = { accessKeyId: 'k', secretAccessKey: 's' };
  const success: RunnerResponse = {
    ok: true,
    result: { type: 'list_files', files: [] } as never,
    cwd: '/workspace/src',
    version: 4,
    changedFiles: 0,
    bytesUploaded: 0,
    sync: { mode: 'warm', changedPaths: 0 },
  };

  it('builds the request from the target and reports the version and cwd the runner answers with', async () => {
    const sent: RunnerRequest[] = [];
    const deps = {
      runner: { invoke: async (request: RunnerRequest) => (sent.push(request), success) },
      workspaceCredentials: { forWorkspace: async (id: string) => ({ ...credentials, sessionToken: `for-${id}` }) },
      config: { bucket: 'bkt' },
      log: memoryLogger().log,
    };
    const outcome = await runOp(
      deps,
      { sessionId: 'ses_1', workspace: { id: 'ws_1', version: 3 }, cwd: '/workspace', allowedDomains: ['example.com'] },
      { type: 'list_files' },
    );
    expect(outcome).toEqual({ result: { type: 'list_files', files: [] }, version: 4, cwd: '/workspace/src', bytesUploaded: success.bytesUploaded });
    expect(sent).toEqual([
      {
        sessionId: 'ses_1',
        workspace: { bucket: 'bkt', id: 'ws_1', version: 3, credentials: { ...credentials, sessionToken: 'for-ws_1' } },
        cwd: '/workspace',
        network: { allowedDomains: ['example.com'] },
        op: { type: 'list_files' },
      },
    ]);

    // No cwd, env or domains: the runner's defaults apply (it parses the request with them).
    await runOp(deps, { sessionId: 'ses_2', workspace: { id: 'ws_2', version: 0 } }, { type: 'list_files' });
    expect(Object.keys(sent[1]!)).toEqual(['sessionId', 'workspace', 'op']);
  });

  it('throws the decoded error for a refusal', async () => {
    const deps = {
      runner: { invoke: async (): Promise<RunnerResponse> => ({ ok: false, error: { kind: 'conflict', message: 'changed concurrently', latestVersion: 9 } }) },
      workspaceCredentials: { forWorkspace: async () => credentials },
      config: { bucket: 'bkt' },
      log: memoryLogger().log,
    };
    const failed = runOp(deps, { sessionId: 's', workspace: { id: 'w', version: 1 } }, { type: 'list_files' });
    await expect(failed).rejects.toBeInstanceOf(WorkspaceConflictError);
    await expect(failed).rejects.toMatchObject({ latestVersion: 9, message: 'changed concurrently' });
  });
});
