import { describe, expect, it } from 'vitest';
import type { Deps } from '../../../functions/deps/deps.ts';
import { listFailedInvocations } from '../../../functions/redrive/failure-listing.ts';
import { redriveAll, redriveOne } from '../../../functions/redrive/redrive.ts';
import { createAsyncFailureStore } from '../../../local/async-failure-store.ts';
import { makeTempDir } from '../../support/temp-dir.ts';

/** The redrive over the local async-failures store (the same file store the local stack uses). */
describe('redriving failed asynchronous invocations', () => {
  const setUp = (refuse: (name: string, event: unknown) => boolean = () => false) => {
    const tmp = makeTempDir();
    const failures = createAsyncFailureStore(tmp.dir, (name) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`);
    const sent: { name: string; event: unknown }[] = [];
    const deps = {
      failedInvocations: failures.store,
      config: { selfFunction: 'stratus-api', github: { workerFunction: 'stratus-github-worker' } } as Deps['config'],
      clock: Date.now,
      asyncInvoke: async (name: string, event: unknown) => {
        if (refuse(name, event)) throw new Error('TooManyRequestsException: Rate exceeded');
        sent.push({ name, event });
      },
    };
    return { tmp, failures, sent, deps };
  };

  it('removes a record only once its invocation was accepted, and keeps one that was refused', async () => {
    const { tmp, failures, sent, deps } = setUp((_name, event) => (event as { n: number }).n === 2);
    for (const n of [1, 2]) failures.add('stratus-api', new Error('boom'), { kind: 'purge_session', n });
    const [first, second] = failures.list().map((r) => r.requestContext.requestId);
    await redriveOne(deps, first!);
    await expect(redriveOne(deps, second!)).rejects.toThrow('Rate exceeded');
    expect(sent).toEqual([{ name: 'stratus-api', event: { kind: 'purge_session', n: 1 } }]);
    expect(failures.list().map((r) => r.requestContext.requestId)).toEqual([second]);
    // The refused one is not held back from the next look.
    expect((await listFailedInvocations(deps, { limit: 10 })).failures.map((f) => f.id)).toEqual([second]);
    tmp.cleanup();
  });

  it('sends every record back to its own function, keeps the others with why, and leaves what fails during the call', async () => {
    const { tmp, failures, sent, deps } = setUp();
    failures.add('stratus-api', new Error('a'), { kind: 'run_subagent', sessionId: 'ses_1', agentLogId: 'x' });
    failures.add('stratus-github-worker', new Error('b'), { kind: 'github_work' });
    failures.add('stratus-tenant-runner', new Error('c'), { op: 'exec' });
    const late = { ...deps, clock: () => Date.now() - 60_000 };
    expect((await redriveAll(late)).redriven).toEqual([]);
    const result = await redriveAll(deps);
    expect(result.redriven.map((r) => r.functionName)).toEqual(['stratus-api', 'stratus-github-worker']);
    expect(result.kept).toEqual([{ id: expect.any(String), reason: expect.stringContaining('stratus-tenant-runner is not one of') }]);
    expect(result.more).toBe(false);
    expect(sent.map((s) => s.name)).toEqual(['stratus-api', 'stratus-github-worker']);
    expect(failures.list().map((r) => r.requestContext.functionArn.split(':').pop())).toEqual(['stratus-tenant-runner']);
    tmp.cleanup();
  });

  it('turns what a killed process left running into failures at the next start, under the same request id', async () => {
    const { tmp, failures } = setUp();
    failures.watch.begin('stratus-api', { kind: 'purge_session', sessionId: 'ses_done' }).done();
    failures.watch.begin('stratus-api', { kind: 'purge_session', sessionId: 'ses_killed' });
    expect(failures.list()).toEqual([]);
    const restarted = createAsyncFailureStore(tmp.dir, (name) => `arn:aws:lambda:us-east-1:000000000000:function:${name}`);
    restarted.recoverInterrupted();
    expect(restarted.list()).toEqual([
      expect.objectContaining({
        requestPayload: { kind: 'purge_session', sessionId: 'ses_killed' },
        responsePayload: { errorType: 'Runtime.ExitError', errorMessage: expect.stringContaining('Runtime exited with error: signal: killed') },
      }),
    ]);
    restarted.recoverInterrupted();
    expect(restarted.list()).toHaveLength(1);
    tmp.cleanup();
  });
});
