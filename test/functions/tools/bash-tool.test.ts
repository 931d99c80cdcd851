import { describe, expect, it } from 'vitest';
import { bashTool, type BashOutput } from '../../../functions/tools/bash-tool.ts';

// How a command's outcome reads to the model (the texts docs/tools.md lists for Bash). What the
// runner reports for real commands is tested through the stack: test/integration/tools/bash-tool.test.ts.
const outcome = (over: Partial<BashOutput>): BashOutput => ({ output: '', exitCode: 0, timedOut: false, timeoutMs: 120_000, cwdReset: false, ...over });
const shown = (over: Partial<BashOutput>) => bashTool.mapToolResultToToolResultBlockParam(outcome(over), 'toolu_bash');

describe('Bash result text', () => {
  it('puts the exit code of a failed command before its output, as an error', () => {
    expect(shown({ exitCode: 3 })).toMatchObject({ content: 'Exit code 3', is_error: true });
    expect(shown({ exitCode: 2, output: 'partial\n' })).toMatchObject({ content: 'Exit code 2\npartial', is_error: true });
    expect(shown({ exitCode: null, output: 'x\n' })).toMatchObject({ content: 'Exit code unknown (killed)\nx', is_error: true });
  });

  it('says when there was no output, trims trailing blank lines and keeps leading spaces', () => {
    expect(shown({ output: '' })).toEqual({ type: 'tool_result', tool_use_id: 'toolu_bash', content: '(Bash completed with no output)', is_error: undefined });
    expect(shown({ output: 'no newline\n\n\n' })).toMatchObject({ content: 'no newline' });
    expect(shown({ output: '  leading\n\n' })).toMatchObject({ content: '  leading' });
  });

  it('appends the timeout and the cwd reset to the output', () => {
    expect(shown({ output: 'started\n', timedOut: true, exitCode: null, timeoutMs: 2_000 })).toMatchObject({
      content: 'started\nCommand timed out after 2s',
      is_error: true,
    });
    expect(shown({ output: '[]\n', cwdReset: true })).toMatchObject({ content: '[]\nShell cwd was reset to /workspace', is_error: undefined });
  });

  it('answers a background task with what it printed so far and where the rest goes', () => {
    expect(shown({ output: '\n\nwarming up\n', backgroundTaskId: 'b1234567', outputPath: '/tmp/tasks/b1234567.output', exitCode: null })).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_bash',
      content: 'warming up\nCommand running in background with ID: b1234567. Output is being written to: /tmp/tasks/b1234567.output',
    });
  });

  it('returns an image only when the command succeeded', () => {
    const image = { mediaType: 'image/png', base64: 'iVBORw0KGgo=' };
    expect(shown({ output: 'data:image/png;base64,iVBORw0KGgo=', image })).toMatchObject({
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }],
    });
    expect(shown({ output: 'data:image/png;base64,iVBORw0KGgo=', image, exitCode: 1 })).toMatchObject({
      content: 'Exit code 1\ndata:image/png;base64,iVBORw0KGgo=',
      is_error: true,
    });
  });
});
