import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

/**
 * Prints `warm` in a sandbox started ahead (its init's arguments hold the stub of
 * sandbox-runner/isolation/warm-bwrap.ts), `cold` in one started for the command (they hold the
 * command itself, hence a pattern that does not match its own text).
 */
const SERVED = `tr '\\0' ' ' </proc/1/cmdline | grep -q 'read -r -[N]' && echo warm || echo cold`;

function toolOutput(turn: { json: { events: { type: string; toolUseId?: string; content?: unknown; isError?: boolean }[] } }, id: string) {
  const result = turn.json.events.find((e) => e.type === 'tool_result' && e.toolUseId === id);
  return { isError: result?.isError, content: result?.content };
}

describe('the turn gets the runner ready for Bash beside its first model request', () => {
  const fx = useLocalStack({ brain: unscripted, settings: { model: {}, turn: {}, api: {}, observability: {}, tenantRunnerCalls: 1 } });

  it("serves a fresh session's first command from a sandbox started ahead", async () => {
    const session = await fx.api.createSession({ 'a.txt': 'a\n' });
    fx.stack.model!.enqueue({ forFirstText: 'first', content: [bash('toolu_first', `cat a.txt; ${SERVED}`)] }, { forFirstText: 'first', ...text('Done.') });
    const turn = await fx.api.turn(session, 'first: run it');
    expect(turn.json).toMatchObject({ stopReason: 'end_turn' });
    expect(toolOutput(turn, 'toolu_first')).toEqual({ isError: false, content: 'a\nwarm' });
  });

  it('finishes a turn whose warm was refused: its first command starts its own sandbox', { timeout: 60_000 }, async () => {
    const busy = await fx.api.createSession();
    const refused = await fx.api.createSession();
    fx.stack.model!.enqueue(
      { forFirstText: 'busy', content: [bash('toolu_busy', 'sleep 3; echo busy done')] },
      { forFirstText: 'busy', ...text('Busy one done.') },
      { forFirstText: 'refused', content: [bash('toolu_refused', SERVED)] },
      { forFirstText: 'refused', ...text('Refused one done.') },
    );
    const first = fx.api.turn(busy, 'busy: run it');
    // The busy session's command holds the tenant's only runner slot (STRATUS_TENANT_RUNNER_CALLS=1)
    // when the second turn starts: its warm is refused, as it waits for no slot.
    await new Promise((r) => setTimeout(r, 1_500));
    const second = await fx.api.turn(refused, 'refused: run it');
    expect((await first).json).toMatchObject({ stopReason: 'end_turn' });
    expect(second.json).toMatchObject({ stopReason: 'end_turn' });
    expect(toolOutput(second, 'toolu_refused')).toEqual({ isError: false, content: 'cold' });
  });
});
