import type { Schemas } from '../api.ts';

const SOURCES: Record<string, string> = {
  repository_file: '.stratus/setup.sh',
  repository_setting: "the repository's set-up script",
  session_setting: "the session's set-up script",
  tenant_setting: "the tenant's default set-up script",
};

/** What the set-up steps did before the first turn: outcome, what they could reach, the end of their output. */
export function SetupSteps({ setup }: { setup: Schemas['SessionSetup'] | null }) {
  if (!setup) return null;
  const exit = setup.exitCode === undefined ? '' : setup.exitCode === null ? ' · ended by a signal' : ` · exit code ${setup.exitCode}`;
  return (
    <section aria-labelledby="setup-h" class="panel">
      <h2 id="setup-h">
        Set-up steps{' '}
        <span class={`status status-${setup.status === 'succeeded' ? 'idle' : 'failed'}`} data-testid="setup-status">
          {setup.status}
        </span>
      </h2>
      <p class="muted">
        {SOURCES[setup.source] ?? setup.source}
        {setup.restored ? ' · restored from the cached environment' : ''}
        {setup.durationMs !== undefined ? ` · ${(setup.durationMs / 1_000).toFixed(1)} s` : ''}
        {exit}
        {setup.timedOut ? ` · stopped at its ${setup.timeoutSeconds} s limit` : ''}
      </p>
      {setup.error && <p class="error">{setup.error}</p>}
      <p class="muted">Could reach: {setup.allowedDomains.length > 0 ? setup.allowedDomains.join(', ') : 'no network'}</p>
      {setup.outputTail !== undefined && (
        <details open={setup.status !== 'succeeded'}>
          <summary>Output{setup.outputTruncated ? ' (the end)' : ''}</summary>
          <pre>{setup.outputTail || '(no output)'}</pre>
        </details>
      )}
    </section>
  );
}
