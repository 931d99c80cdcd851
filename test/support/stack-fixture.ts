import { afterAll, beforeAll } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack.ts';
import type { ScriptedRoute } from './agent-requests.ts';
import { apiClient } from './api-client.ts';
import { makeTempDir } from './temp-dir.ts';

/**
 * A local stack in a fresh temp dir for the enclosing describe block, with an API client. Options
 * that depend on something another `beforeAll` starts first (a stand-in's URL) can be a function.
 */
export function useLocalStack(given: Omit<LocalStackOptions, 'dataDir'> | (() => Omit<LocalStackOptions, 'dataDir'>)): {
  stack: LocalStack;
  api: ReturnType<typeof apiClient>;
  dataDir: string;
} {
  const tmp = makeTempDir();
  const fixture = { dataDir: tmp.dir } as { stack: LocalStack; api: ReturnType<typeof apiClient>; dataDir: string };
  beforeAll(async () => {
    // Metric lines are asserted where they matter (test/integration/observability.test.ts); elsewhere they are noise.
    const opts = typeof given === 'function' ? given() : given;
    fixture.stack = await startLocalStack({ dataDir: tmp.dir, writeMetrics: () => undefined, ...opts });
    fixture.api = apiClient(fixture.stack.apiUrl, fixture.stack.token);
  });
  afterAll(async () => {
    await fixture.stack?.stop();
    tmp.cleanup();
  });
  return fixture;
}

/**
 * A local stack whose scripted model answers each request through `routed.route`, which each
 * test sets to its own; a request the route leaves (undefined) gets the unscripted error.
 */
export function useRoutedLocalStack(opts: Omit<LocalStackOptions, 'dataDir' | 'brain'> = {}): {
  fx: ReturnType<typeof useLocalStack>;
  routed: { route: ScriptedRoute };
} {
  const routed: { route: ScriptedRoute } = { route: () => undefined };
  return { fx: useLocalStack({ ...opts, brain: (body) => routed.route(body) ?? unscripted() }), routed };
}

/** A brain that fails loudly: every response a test needs must be queued. */
export const unscripted = () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } });
export const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
export const bash = (id: string, command: string) => ({ type: 'tool_use' as const, id, name: 'Bash', input: { command } });
/** A command printing exactly `n` copies of the character `c`. */
export const chars = (n: number, c: string) => `head -c ${n} /dev/zero | tr "\\0" ${c}`;

/** What opens the first user message of a session without instructions: only today's date (docs/context.md). */
export const dateBlock = () => `<system-reminder>\nToday's date is ${new Date().toISOString().slice(0, 10)}.\n</system-reminder>`;
