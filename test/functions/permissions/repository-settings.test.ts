import { describe, expect, it } from 'vitest';
import { parseRepositorySettings } from '../../../functions/permissions/repository-settings.ts';

describe('parseRepositorySettings', () => {
  it('takes rules, command hooks (flattened, timeouts in seconds) and env', () => {
    const parsed = parseRepositorySettings(
      JSON.stringify({
        $schema: 'https://json.schemastore.org/claude-code-settings.json',
        permissions: { allow: ['Bash(npm test:*)'], deny: ['Bash(rm:*)', 'Read(/workspace/.env)'], ask: ['Bash(git push:*)'] },
        hooks: {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [
                { type: 'command', command: 'check.sh', timeout: 30 },
                { type: 'command', command: 'log.sh' },
              ],
            },
          ],
          PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'npx prettier --write .' }] }],
        },
        env: { NODE_ENV: 'test', RETRIES: 3 },
      }),
    );
    expect(parsed).toEqual({
      rules: { allow: ['Bash(npm test:*)'], deny: ['Bash(rm:*)', 'Read(/workspace/.env)'], ask: ['Bash(git push:*)'] },
      hooks: [
        { event: 'PreToolUse', matcher: 'Bash', command: 'check.sh', timeoutS: 30 },
        { event: 'PreToolUse', matcher: 'Bash', command: 'log.sh' },
        { event: 'PostToolUse', matcher: 'Edit|Write', command: 'npx prettier --write .' },
      ],
      env: { NODE_ENV: 'test', RETRIES: '3' },
      notes: [],
    });
  });

  it('notes what it refuses or does not apply, and keeps the rest', () => {
    const parsed = parseRepositorySettings(
      JSON.stringify({
        apiKeyHelper: 'cat key',
        model: 'claude-opus',
        statusLine: { type: 'command', command: 'x' },
        permissions: { deny: ['Bash(rm:*)', 'Bash(', 7], additionalDirectories: ['/'] },
        hooks: {
          Stop: [{ hooks: [{ type: 'command', command: 'x' }] }],
          PreToolUse: [
            {
              hooks: [
                { type: 'prompt', prompt: 'x' },
                { type: 'command', command: 'ok.sh', timeout: 5000 },
              ],
            },
          ],
        },
        env: { PATH: '/evil', 'BAD-NAME': 'x', OBJ: { a: 1 }, GOOD: 'yes' },
      }),
    );
    expect(parsed.rules).toEqual({ deny: ['Bash(rm:*)'] });
    expect(parsed.hooks).toEqual([{ event: 'PreToolUse', command: 'ok.sh', timeoutS: 600 }]);
    expect(parsed.env).toEqual({ GOOD: 'yes' });
    expect(parsed.notes).toEqual([
      '.claude/settings.json: "apiKeyHelper" refused: it would run a command outside the sandbox.',
      '.claude/settings.json: "model" refused: the model (and what it costs) is the deployment\'s and the session\'s choice.',
      '.claude/settings.json: "statusLine" is not applied in Stratus (only permissions, hooks and env are).',
      '.claude/settings.json: 1 entry of "permissions.deny" skipped: each rule is a string of at most 500 characters.',
      '.claude/settings.json: not a permission rule, skipped: "Bash(".',
      '.claude/settings.json: "permissions.additionalDirectories" refused: commands and tools only ever see /workspace.',
      '.claude/settings.json: "Stop" hooks do not run in Stratus (only PreToolUse, PostToolUse, PostToolUseFailure).',
      '.claude/settings.json: a "PreToolUse" hook of type "prompt" refused: a repository\'s hooks may only be commands, which run in the sandbox.',
      '.claude/settings.json: a "PreToolUse" hook\'s timeout is cut to 600 s.',
      '.claude/settings.json: variable "PATH" is set by the sandbox; skipped.',
      '.claude/settings.json: variable "BAD-NAME" is not a variable name; skipped.',
      '.claude/settings.json: variable "OBJ" needs a string value; skipped.',
    ]);
  });

  it('applies nothing from a file that is not a JSON object, and says so', () => {
    expect(parseRepositorySettings('[1]')).toEqual({
      rules: {},
      hooks: [],
      env: {},
      notes: ['.claude/settings.json is not a JSON object; none of it applies.'],
    });
    const broken = parseRepositorySettings('{"permissions": ');
    expect(broken.rules).toEqual({});
    expect(broken.notes[0]).toMatch(/^\.claude\/settings\.json is not valid JSON \(.+\); none of it applies\.$/);
  });

  it('reads a file that starts with a byte-order mark', () => {
    expect(parseRepositorySettings('\uFEFF{"permissions":{"deny":["Bash(rm:*)"]}}').rules).toEqual({ deny: ['Bash(rm:*)'] });
  });

  it('sums up past 20 notes and cuts long ones, so a hostile file cannot flood the events', () => {
    const keys = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}${i === 0 ? 'x'.repeat(2_000) : ''}`, 1]));
    const { notes } = parseRepositorySettings(JSON.stringify(keys));
    expect(notes).toHaveLength(21);
    expect(notes[0]!.length).toBe(500);
    expect(notes[0]!.endsWith('…')).toBe(true);
    expect(notes[20]).toBe('.claude/settings.json: 10 more notes not shown.');
  });
});
