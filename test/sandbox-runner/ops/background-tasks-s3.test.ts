import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerOp, RunnerResponse } from '../../../sandbox-runner/protocol.ts';
import { taskOutputTool } from '../../../functions/tools/task-output-tool.ts';
import { BUCKET, expectOk, startRunnerFixture, type RunnerFixture } from '../../support/runner-fixture.ts';

/** Background tasks outlive the runner container that started them: their copy lives in S3. */
describe('background tasks through S3', () => {
  let fx: RunnerFixture;
  beforeAll(async () => {
    fx = await startRunnerFixture();
  });
  afterAll(async () => {
    await fx?.stop();
  });

  const taskOutput = (taskId: string, block: boolean, timeoutMs = 20_000): RunnerOp => ({ type: 'task_output', taskId, block, timeoutMs });
  const result = (r: RunnerResponse) => expectOk(r).result;

  /** Bounded polling: asks until `done` holds or the attempts run out. */
  async function until(ask: () => Promise<RunnerResponse>, done: (r: RunnerResponse) => boolean): Promise<RunnerResponse> {
    let last = await ask();
    for (let i = 0; i < 100 && !done(last); i++) {
      await new Promise((r) => setTimeout(r, 100));
      last = await ask();
    }
    return last;
  }

  it('answers TaskOutput from a fresh runner with the output and final status; TaskStop there says it cannot', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { README: 'x\n' } }));
    const started = result(
      await fx.call(id, 1, {
        type: 'bash',
        command: 'echo hello; while [ ! -f /tmp/go ]; do sleep 0.1; done; echo bye; exit 3',
        timeoutMs: 20_000,
        background: 'now',
      }),
    );
    if (started.type !== 'bash' || !started.backgroundTaskId) throw new Error('expected a background task');
    const taskId = started.backgroundTaskId;

    // The owner refreshes the S3 copy whenever it is asked: once it has printed "hello", so has the copy.
    const seen = await until(
      () => fx.call(id, 1, taskOutput(taskId, false)),
      (r) => r.ok && r.result.type === 'task_output' && r.result.output === 'hello\n',
    );
    expect(result(seen)).toMatchObject({ status: 'running', output: 'hello\n' });
    expect(result(await fx.call(id, 1, taskOutput(taskId, false), { runner: 'fresh' }))).toEqual({
      type: 'task_output',
      retrieval: 'not_ready',
      taskId,
      status: 'running',
      output: 'hello\n',
    });
    expect(await fx.call(id, 1, { type: 'task_stop', taskId }, { runner: 'fresh' })).toEqual({
      ok: false,
      error: {
        kind: 'tool_error',
        message: `<tool_use_error>Task ${taskId} is running in another runner container and cannot be stopped from here. Use TaskOutput to read its output; it ends on its own or when that container does.</tool_use_error>`,
      },
    });

    // Let it finish (its /tmp is the owner's), then wait for it from the fresh runner, which polls S3.
    expectOk(await fx.call(id, 1, { type: 'bash', command: 'touch /tmp/go', timeoutMs: 20_000, background: 'never' }));
    expect(result(await fx.call(id, 1, taskOutput(taskId, true), { runner: 'fresh' }))).toEqual({
      type: 'task_output',
      retrieval: 'success',
      taskId,
      status: 'failed',
      exitCode: 3,
      output: 'hello\nbye\n',
    });
    // Handed over once, forgotten everywhere, the owner included.
    const gone = { ok: false, error: { kind: 'tool_error', message: `<tool_use_error>No task found with ID: ${taskId}</tool_use_error>` } };
    expect(await fx.call(id, 1, taskOutput(taskId, true), { runner: 'fresh' })).toEqual(gone);
    expect(await fx.call(id, 1, taskOutput(taskId, true))).toEqual(gone);
  });

  it('says so at once when the runner that owned a running task stopped reporting, instead of waiting', async () => {
    const id = fx.newWorkspaceId();
    expectOk(await fx.call(id, 0, { type: 'create_workspace', files: { README: 'x\n' } }));
    // What a container that vanished mid-task leaves behind: a running record it no longer refreshes.
    const taskId = 'bdeadbeef';
    const tenMinutesAgo = Date.now() - 10 * 60_000;
    const put = (key: string, body: string) => fx.s3Client.send(new PutObjectCommand({ Bucket: BUCKET, Key: `workspaces/${id}/tasks/${key}`, Body: body }));
    await put(`${taskId}.output`, 'partial\n');
    await put(`${taskId}.json`, JSON.stringify({ taskId, command: 'make all', status: 'running', updatedAt: tenMinutesAgo }));

    const answer = result(await fx.call(id, 1, taskOutput(taskId, true, 600_000), { runner: 'fresh' }));
    if (answer.type !== 'task_output') throw new Error('expected a task_output result');
    expect(answer).toMatchObject({ retrieval: 'not_ready', taskId, status: 'running', output: 'partial\n' });
    expect(answer.ownerSilentMs).toBeGreaterThanOrEqual(10 * 60_000);

    const block = taskOutputTool.mapToolResultToToolResultBlockParam({ ...answer, ownerSilentMs: 600_400 }, 'tu1');
    expect(block.content).toBe(
      `<retrieval_status>not_ready</retrieval_status>\n\n<task_id>${taskId}</task_id>\n\n<task_type>local_bash</task_type>\n\n<status>running</status>\n\n` +
        '<note>The runner container that ran this task has not reported for 600 s: it has most likely ended, and the task with it. ' +
        'The output below is the last copy it saved. Waiting will not change it; run the command again if you need its result.</note>\n\n' +
        '<output>\npartial\n</output>',
    );
  });
});
