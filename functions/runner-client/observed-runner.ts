import type { Metrics } from '../shared/metrics.ts';
import { traced, type Tracing } from '../shared/tracing.ts';
import type { RunnerTimings } from '../../sandbox-runner/protocol.ts';
import type { RunnerClient } from './runner-client.ts';

/**
 * The runner client with each call measured: RunnerCallDuration, RunnerColdSyncs (the call's
 * runner environment had to materialise the workspace from a snapshot, which is what a fresh
 * environment does) and RunnerCallFailures (the call itself failed, not the command it ran).
 * A successful call also splits its time as the runner reports it: RunnerSyncDuration (the copy
 * brought to the version), RunnerOpDuration (the op itself, a command's sandbox included),
 * RunnerPublishDuration (its change published); the rest of RunnerCallDuration is the way there
 * and back (the Invoke API, the request's parsing, the workspace queue). Each call is a
 * `runner_op` span (a child of the tool call that made it) with the same split as attributes.
 */
export function observeRunner(client: RunnerClient, obs: { metrics: Metrics; tracing: Tracing; clock: () => number }): RunnerClient {
  const measured = measuredRunner(client, obs);
  return {
    invoke: (request) =>
      traced(obs.tracing, 'runner_op', { 'stratus.runner.op': request.op.type, 'stratus.session_id': request.sessionId }, async (span) => {
        const response = await measured.invoke(request);
        span.annotate('stratus.runner.ok', response.ok);
        if (!response.ok) span.annotate('stratus.runner.error', response.error.kind);
        else {
          span.annotate('stratus.runner.sync', response.sync.mode);
          for (const [key, ms] of Object.entries(response.timings ?? {})) span.annotate(`stratus.runner.${key}`, ms);
        }
        return response;
      }),
  };
}

function measuredRunner(client: RunnerClient, obs: { metrics: Metrics; clock: () => number }): RunnerClient {
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
