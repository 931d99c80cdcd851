import type { Metrics } from '../shared/metrics.ts';
import type { RunnerClient } from './runner-client.ts';

/**
 * The runner client with each call measured: RunnerCallDuration, RunnerColdSyncs (the call's
 * runner environment had to materialise the workspace from a snapshot, which is what a fresh
 * environment does) and RunnerCallFailures (the call itself failed, not the command it ran).
 */
export function observeRunner(client: RunnerClient, obs: { metrics: Metrics; clock: () => number }): RunnerClient {
  return {
    async invoke(request) {
      const startedAt = obs.clock();
      const emit = (failed: boolean, cold: boolean) =>
        obs.metrics.emit(
          {
            RunnerCallDuration: { value: obs.clock() - startedAt, unit: 'Milliseconds' },
            RunnerColdSyncs: { value: cold ? 1 : 0, unit: 'Count' },
            RunnerCallFailures: { value: failed ? 1 : 0, unit: 'Count' },
          },
          { metadata: { sessionId: request.sessionId, op: request.op.type } },
        );
      try {
        const response = await client.invoke(request);
        emit(false, response.ok && response.sync.mode === 'cold');
        return response;
      } catch (err) {
        emit(true, false);
        throw err;
      }
    },
  };
}
