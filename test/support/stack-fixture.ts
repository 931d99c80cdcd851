import { afterAll, beforeAll } from 'vitest';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack.ts';
import type { ScriptedRoute } from './agent-requests.ts';
import { apiClient } from './api-client.ts';
import { makeTempDir } from './temp-dir.ts';

type StackOptions = Omit<LocalStackOptions, 'dataDir'>;

/**
 * A local stack in a fresh temp dir for the enclosing describe block, with an API client. Options
 * given as a function are read when the stack starts (after earlier `beforeAll`s, e.g. servers
 * whose ports the operator settings name).
 */
export function useLocalStack(options: StackOptions | (() => StackOptions)): { stack: LocalStack; api: ReturnType<typeof apiClient>; dataDir: string } {
  const tmp = makeTempDir();
  const fixture = { dataDir: tmp.dir } as { stack: LocalStack; api: ReturnType<typeof apiClient>; dataDir: string };
  beforeAll(async () => {
    // Metric lines are asserted where they matter (test/integration/observability.test.ts); elsewhere they are noise.
    const opts = typeof options === 'function' ? options() : options;
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
export function useRoutedLocalStack(opts: Omit<LocalStackOptions, 'dataDir' | 'brain'> | (() => Omit<LocalStackOptions, 'dataDir' | 'brain'>) = {}): { fx: ReturnType<typeof useLocalStack>; routed: { route: ScriptedRoute } } {
  const routed: { route: ScriptedRoute } = { route: () => undefined };
  const brain: LocalStackOptions['brain'] = (body) => routed.route(body) ?? unscripted();
  return { fx: useLocalStack(() => ({ ...(typeof opts === 'function' ? opts() : opts), brain })), routed };
}

/** A brain that fails loudly: every response a test needs must be queued. */
export const unscripted = () => ({ error: { status: 500, type: 'api_error', message: 'unscripted' } });
export const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
export const bash = (id: string, command: string) => ({ type: 'tool_use' as const, id, name: 'Bash', input: { command } });
/** A command printing exactly `n` copies of the character `c`. */
export const chars = (n: number, c: string) => `head -c ${n} /dev/zero | tr "\\0" ${c}`;
