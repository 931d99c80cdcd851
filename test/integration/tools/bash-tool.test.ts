import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

describe('Bash through the runner', () => {
  const h = useToolStack();
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

  it('merges stdout and stderr in order, reports exit codes, closes stdin and caps the timeout', async () => {
    // How each outcome is worded is a unit test: test/functions/tools/bash-tool.test.ts.
    // One call per model response: an error from one Bash call cancels its siblings in the same response.
    const r = await h.run(
      {},
      [
        call('b1', 'Bash', { command: 'echo out; echo err >&2; echo out2' }),
        call('b2', 'Bash', { command: 'exit 3' }),
        call('b3', 'Bash', { command: 'echo partial; exit 2' }),
        call('b7', 'Bash', { command: 'cat; echo done' }),
        call('b8', 'Bash', { command: 'echo x', timeout: 700_000 }),
      ].map((c) => [c]),
    );
    expect(r.b1).toMatchObject(ok('out\nerr\nout2'));
    expect(r.b2).toMatchObject(err('Exit code 3'));
    expect(r.b3).toMatchObject(err('Exit code 2\npartial'));
    // stdin is closed: cat sees end of input at once.
    expect(r.b7).toMatchObject(ok('done'));
    // A timeout above the maximum is capped, not refused.
    expect(r.b8).toMatchObject(ok('x'));
  });

  it("words bash's own errors as the reference does: the shell is /bin/bash and the command starts on line 1", async () => {
    const r = await h.run({}, [
      [call('n1', 'Bash', { command: 'no-such-command-xyz' })],
      [call('n2', 'Bash', { command: 'echo first\nno-such-command-xyz --flag' })],
      [call('n3', 'Bash', { command: 'echo "$0"; echo $LINENO' })],
    ]);
    expect(r.n1).toMatchObject(err('Exit code 127\n/bin/bash: line 1: no-such-command-xyz: command not found'));
    expect(r.n2).toMatchObject(err('Exit code 127\nfirst\n/bin/bash: line 2: no-such-command-xyz: command not found'));
    expect(r.n3).toMatchObject(ok('/bin/bash\n1'));
  });

  it('starts each call in a fresh shell, carries the cwd, and resets it when it leaves the workspace', async () => {
    const r = await h.run({ 'd/x.txt': 'x' }, [
      [call('c1', 'Bash', { command: 'cd d && pwd' })],
      [call('c2', 'Bash', { command: 'pwd; export FOO=1' })],
      [call('c3', 'Bash', { command: 'echo "[$FOO]"; cd /tmp' })],
      [call('c4', 'Bash', { command: 'pwd' })],
    ]);
    expect(r.c1).toMatchObject(ok('/workspace/d'));
    expect(r.c2).toMatchObject(ok('/workspace/d'));
    expect(r.c3).toMatchObject(ok('[]\nShell cwd was reset to /workspace'));
    expect(r.c4).toMatchObject(ok('/workspace'));
  });

  it('returns data:image output as an image block, and persists output over 30,000 characters behind a preview and a path to Read', async () => {
    const r = await h.run({}, [[call('i1', 'Bash', { command: `printf 'data:image/png;base64,${PNG}'` }), call('t1', 'Bash', { command: 'seq 1 20000' })]]);
    expect(r.i1).toMatchObject(ok([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }]));
    // Past 30,000 characters the whole output is persisted; the model gets a preview and a path to Read.
    const text = String(r.t1!.content);
    expect(
      text.startsWith(
        '<persisted-output>\nOutput too large (106.3KB). Full output saved to: /workspace/.stratus/tool-results/t1.txt\n\nPreview (first 2KB):\n1\n2\n3\n',
      ),
    ).toBe(true);
  });
});
