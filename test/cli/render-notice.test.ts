import { describe, expect, it } from 'vitest';
import { createTurnRenderer } from '../../cli/render.ts';

describe('the CLI shows notices', () => {
  it('prints a notice event (a refused part of the repository settings) on its own line', () => {
    const written: string[] = [];
    const out = { isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const render = createTurnRenderer(out, { json: false });
    render.event({
      type: 'notice',
      source: '.claude/settings.json',
      message: '.claude/settings.json: "mcpServers" refused: MCP servers come from the session\'s settings, never from the repository.',
    });
    expect(written.join('')).toBe(
      '  ! .claude/settings.json: "mcpServers" refused: MCP servers come from the session\'s settings, never from the repository.\n',
    );
  });
});
