import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';
import { describe, expect, it } from 'vitest';
import { readTool } from '../../../functions/tools/read-tool.ts';
import { assembleToolPool } from '../../../functions/tools/registry.ts';
import { runToolUse, type ToolUseEnv } from '../../../functions/tools/run-tool-use.ts';
import { testContext } from '../../support/fake-tools.ts';

// Expected texts were observed from Claude Code 2.1.88 driven by the scripted model (docs/tools.md).
// These refusals come before the runner is asked: the test context has none, and fails loudly if called.
const env: ToolUseEnv = {
  pool: assembleToolPool({ builtins: [readTool], external: [] }),
  permissions: { mode: 'bypassPermissions', rules: [], unattended: false },
  hooks: [],
};

async function read(input: Record<string, unknown>): Promise<ToolResultBlockParam> {
  const out = await runToolUse({ id: 'toolu_read', name: 'Read', input }, testContext(), env);
  if (out.kind !== 'result') throw new Error(`expected a tool_result, got ${out.kind}`);
  return out.result;
}

const refused = (text: string) => ({ is_error: true, content: `<tool_use_error>${text}</tool_use_error>` });

describe('Read refuses before reading', () => {
  it('binary files by their extension', async () => {
    expect(await read({ file_path: '/workspace/tool.exe' })).toMatchObject(
      refused('This tool cannot read binary files. The file appears to be a binary .exe file. Please use appropriate tools for binary file analysis.'),
    );
  });

  it('device files that would block or never end', async () => {
    expect(await read({ file_path: '/dev/zero' })).toMatchObject(refused("Cannot read '/dev/zero': this device file would block or produce infinite output."));
    expect(await read({ file_path: '/proc/self/fd/0' })).toMatchObject(
      refused("Cannot read '/proc/self/fd/0': this device file would block or produce infinite output."),
    );
  });

  it('a pages parameter that is not a range, spans more than 20 pages, or is given for a file that is not a PDF', async () => {
    expect(await read({ file_path: '/workspace/d.pdf', pages: 'x' })).toMatchObject(
      refused('Invalid pages parameter: "x". Use formats like "1-5", "3", or "10-20". Pages are 1-indexed.'),
    );
    expect(await read({ file_path: '/workspace/d.pdf', pages: '1-30' })).toMatchObject(
      refused('Page range "1-30" exceeds maximum of 20 pages per request. Please use a smaller range.'),
    );
    expect(await read({ file_path: '/workspace/a.txt', pages: '1' })).toMatchObject(
      refused('The pages parameter is only for PDF files; /workspace/a.txt is not one.'),
    );
  });
});
