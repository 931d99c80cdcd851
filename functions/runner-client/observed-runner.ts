import type { Metrics } from '../shared/metrics.ts';
import type { RunnerTimings } from '../../sandbox-runner/protocol.ts';
import type { RunnerClient } from './runner-client.ts';

/**
 * The runner client with each call measured: RunnerCallDuration, RunnerColdSyncs (the call's
 * runner environment had to materialise the workspace from a snapshot, which is what a fresh
 * environment does) and RunnerCallFailures (the call itself failed, not the command it ran).
 * A successful call also splits its time as the runner reports it: RunnerSyncDuration (the copy
 * brought to the version), RunnerOpDuration (the op itself, a command's sandbox included),
 * RunnerPublishDuration (its change published); the rest of RunnerCallDuration is the way there
 * and back (the Invoke API, the request's parsing, the workspace queue).
 */
export function observeRunner(client: RunnerClient, obs: { metrics: Metrics; clock: () => number }): RunnerClient {
  return {
    async invoke(request) {
      const startedAt = obs.clock();
      const emit = (failed: boolean, cold: boolean, timings?: RunnerTimings) =>
        obs.metrics.emit(
          {
            RunnerCallDuration: { value: obs.clock() - startedAt, unit: 'Milliseconds' },
            RunnerColdSyncs: { value: cold ? 1 : 0, unit: 'Count' },
            RunnerCallFailures: { value: failed ? 1 : 0, unit: 'Count' },
            ...(timings
              ? {
                  RunnerSyncDuration: { value: timings.syncMs, unit: 'Milliseconds' },
                  RunnerOpDuration: { value: timings.opMs, unit: 'Milliseconds' },
                  RunnerPublishDuration: { value: timings.publishMs, unit: 'Milliseconds' },
                }
              : {}),
          },
          { metadata: { sessionId: request.sessionId, op: request.op.type } },
        );
      try {
        const response = await client.invoke(request);
        emit(false, response.ok && response.sync.mode === 'cold', response.ok ? response.timings : undefined);
        return response;
      } catch (err) {
        emit(true, false);
        throw err;
      }
    },
  };
}
