import { describe, expect, it } from 'vitest';
import { bash, text, unscripted, useLocalStack } from '../support/stack-fixture.ts';

const tool = (id: string, name: string, input: Record<string, unknown>) => ({ content: [{ type: 'tool_use' as const, id, name, input }] });

describe('GET /v1/sessions/{id}/workspace/diff on the local stack', () => {
  const fx = useLocalStack({ brain: unscripted });
  const diffOf = async (sid: string, query = '') => fx.api.request('GET', `/v1/sessions/${sid}/workspace/diff${query}`);
  const byPath = (files: { path: string; diff?: string }[]): Record<string, any> => Object.fromEntries(files.map((f) => [f.path, f]));

  it("lists the agent's changes per path with unified diffs, for the whole session and for each turn", async () => {
    const sid = await fx.api.createSession({ 'src/app.ts': 'line1\nline2\nline3\n', 'old.txt': 'bye\n', 'keep.sh': 'echo keep\n', 'gone.md': 'x\n' });
    // Before any turn, nothing was changed by the agent.
    const before = await diffOf(sid);
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ from: 1, to: 1, files: [], totalFiles: 0, truncated: false });

    fx.stack.model!.enqueue(
      tool('t1', 'Write', { file_path: '/workspace/notes.md', content: '# Notes\nfirst\n' }),
      tool('t2', 'Read', { file_path: '/workspace/src/app.ts' }),
      tool('t3', 'Edit', { file_path: '/workspace/src/app.ts', old_string: 'line2', new_string: 'LINE2' }),
      { content: [bash('t4', "rm old.txt gone.md && printf 'a\\000b' > data.bin && chmod +x keep.sh && ln -s notes.md link.md")] },
      text('Done.'),
    );
    const first = await fx.api.turn(sid, 'change things');
    expect(first.json).toMatchObject({ stopReason: 'end_turn' });
    fx.stack.model!.enqueue({ content: [bash('t5', "sed -i 's/line3/line three/' src/app.ts && echo second >> notes.md")] }, text('Done again.'));
    const second = await fx.api.turn(sid, 'more');
    expect(second.json).toMatchObject({ stopReason: 'end_turn' });

    const whole = await diffOf(sid);
    expect(whole.status).toBe(200);
    expect(whole.json).toMatchObject({ from: 1, totalFiles: 7, truncated: false });
    const session = await fx.api.request('GET', `/v1/sessions/${sid}`);
    expect(whole.json.to).toBe(session.json.workspace.version);
    const files = byPath(whole.json.files);
    expect(whole.json.files.map((f: { path: string; kind: string }) => `${f.kind} ${f.path}`)).toEqual([
      'added data.bin',
      'deleted gone.md',
      'mode keep.sh',
      'added link.md',
      'added notes.md',
      'deleted old.txt',
      'modified src/app.ts',
    ]);
    expect(files['data.bin']).toMatchObject({ skipped: 'binary', newSize: 3 });
    expect(files['data.bin'].diff).toBeUndefined();
    expect(files['keep.sh']).toMatchObject({ oldMode: 0o644, newMode: 0o755 });
    expect(files['link.md']).toMatchObject({ newTarget: 'notes.md' });
    expect(files['old.txt']).toMatchObject({ deletions: 1, additions: 0, diff: '--- a/old.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n' });
    expect(files['notes.md'].diff).toBe('--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,3 @@\n+# Notes\n+first\n+second\n');
    expect(files['src/app.ts']).toMatchObject({ kind: 'modified', additions: 2, deletions: 2 });
    expect(files['src/app.ts'].diff).toBe('--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n line1\n-line2\n-line3\n+LINE2\n+line three\n');

    // Turn 2 alone: its two edits, none of turn 1's.
    const turn2 = await diffOf(sid, `?turn=${second.json.turnId}`);
    expect(turn2.status).toBe(200);
    expect(turn2.json.turnId).toBe(second.json.turnId);
    expect(turn2.json.to).toBe(whole.json.to);
    expect(turn2.json.files.map((f: { path: string; kind: string }) => `${f.kind} ${f.path}`)).toEqual(['modified notes.md', 'modified src/app.ts']);
    expect(byPath(turn2.json.files)['src/app.ts'].diff).toBe('--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n line1\n LINE2\n-line3\n+line three\n');
    // Turn 1 alone (an older version pair: read from storage, not from the warm copy).
    const turn1 = await diffOf(sid, `?turn=${first.json.turnId}`);
    expect(turn1.json.from).toBe(1);
    expect(turn1.json.to).toBe(turn2.json.from);
    expect(byPath(turn1.json.files)['src/app.ts'].diff).toBe('--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n line1\n-line2\n+LINE2\n line3\n');
    expect(byPath(turn1.json.files)['notes.md'].diff).toBe('--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+first\n');

    // Any two versions, and one path of them.
    const one = await diffOf(sid, `?from=${turn1.json.from}&to=${turn1.json.to}&path=old.txt`);
    expect(one.json).toMatchObject({ totalFiles: 1, files: [{ path: 'old.txt', kind: 'deleted' }] });
  });

  it('answers bad turn ids and versions with 404 and 400', async () => {
    const sid = await fx.api.createSession({ 'a.txt': 'a\n' });
    const bad = async (query: string, status: number, message: RegExp) => {
      const res = await diffOf(sid, query);
      expect(res.status).toBe(status);
      expect(res.json.error.message).toMatch(message);
    };
    await bad('?turn=turn_nope', 404, /Turn turn_nope not found/);
    await bad('?turn=turn_0mi3k2x9a4f1c2d3e4f5a6b7c8', 404, /not found/);
    await bad('?to=5', 400, /"to" is 5, but the workspace is at version 1/);
    await bad('?from=1&to=0', 400, /"from" \(1\) is after "to" \(0\)/);
    await bad('?from=abc', 400, /from/);
    await bad('?from=-1', 400, /from/);
    await bad('?turn=turn_0mi3k2x9a4f1c2d3e4f5a6b7c8&from=0', 400, /either "turn" or "from"/);
    const missing = await fx.api.request('GET', '/v1/sessions/ses_nope/workspace/diff');
    expect(missing.status).toBe(404);
    // Version 0 (empty) to 1 (the seed) is a valid pair.
    const seeded = await diffOf(sid, '?from=0');
    expect(seeded.json).toMatchObject({ from: 0, to: 1, files: [{ path: 'a.txt', kind: 'added', diff: '--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,1 @@\n+a\n' }] });
  });
});
