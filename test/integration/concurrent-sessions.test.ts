import { describe, expect, it } from 'vitest';
import { demoBrain } from '../../local/scripted-model/demo-brain.ts';
import { createWriterSessions, runWriteRound } from '../support/concurrent-writers.ts';
import { useLocalStack } from '../support/stack-fixture.ts';

/**
 * Sixteen sessions writing at once through the whole stack: sixteen runner processes (one per
 * workspace tenant) started together, every acknowledged write read back. The runner's own
 * lock/eviction races are driven directly in test/sandbox-runner/concurrency.test.ts;
 * `npm run bench -- soak` is the long version. The bound is generous because each new workspace
 * starts a runner process (~0.7 s of CPU), which a loaded 2-core machine serialises.
 */
describe('concurrent sessions writing to their workspaces', () => {
  const fx = useLocalStack({ brain: demoBrain });

  it('keeps every acknowledged write of 16 sessions × 3 turns, with no error tool_result', async () => {
    const sessions = await createWriterSessions(fx.api, 16);
    const report = await runWriteRound(fx.api, sessions, { turns: 3, round: 0 });
    expect(report.failedTurns).toEqual([]);
    expect(report.errorResults).toEqual([]);
    expect(report.wedged).toEqual([]);
    expect(report.lostWrites).toEqual([]);
    expect(report.turns).toBe(48);
    // Not an empty success: every file holds its seed and its three lines, in order.
    for (const [s, session] of sessions.entries()) {
      expect(session.expected).toEqual([`seed ${s}`, `r0 s${s} t0`, `r0 s${s} t1`, `r0 s${s} t2`]);
      const file = await fx.api.request('GET', `/v1/sessions/${session.id}/workspace/files/log.txt`);
      expect(file.text).toBe(`${session.expected.join('\n')}\n`);
    }
  }, 180_000);
});
