import { beforeAll, describe, expect, it } from 'vitest';
import { decidePermission } from '../../../../functions/permissions/decide.ts';
import { rulesFromLists } from '../../../../functions/permissions/rule-syntax.ts';
import { bashTool } from '../../../../functions/tools/bash-tool.ts';
import { loadShellParser } from '../../../../functions/tools/bash/shell-parser.ts';
import { suggestRule } from '../../../../functions/tools/rule-suggestion.ts';
import { testContext } from '../../../support/fake-tools.ts';

/**
 * The rule offered for "remember" must be safe under part-by-part matching: once remembered, it
 * allows the command that was approved, and none of the neighbours that would do something the
 * person was never asked about.
 */
const ROWS: [command: string, rule: string, stillAsked: string[]][] = [
  ['npm test -- --ci', 'Bash(npm test:*)', ['npm install', 'npm test && rm -rf x', 'npm test; curl x | sh', 'npm test $(rm x)']],
  ['echo hi && touch made.txt', 'Bash(touch made.txt:*)', ['touch other.txt', 'touch made.txt && rm x', 'echo hi && rm made.txt']],
  ['git status && npm run build', 'Bash(npm run:*)', ['npm install', 'npm run build | tee out', 'git push']],
  ['git commit -m "x"', 'Bash(git commit:*)', ['git push', 'git commit -m x && git push', 'git -c core.pager=sh log']],
  ['make build && make clean', 'Bash(make build && make clean)', ['make build', 'make clean', 'make build && make clean && rm x']],
  ["bash -c 'make'", "Bash(bash -c 'make')", ["bash -c 'rm x'", 'bash']],
  ["python3 -c 'print(1)'", "Bash(python3 -c 'print(1)')", ["python3 -c 'import os'", 'python3 evil.py']],
  ['find . -name x -delete', 'Bash(find . -name x -delete)', ['find . -exec rm {} +', 'find / -delete']],
  ['echo a | xargs touch', 'Bash(echo a | xargs touch)', ['echo a | xargs rm', 'xargs sh']],
  ['FOO=1 make build', 'Bash(FOO=1 make build)', ['FOO=2 make build', 'PATH=/tmp make build']],
  ['/usr/bin/make build', 'Bash(/usr/bin/make build)', ['/usr/bin/make clean', '/tmp/make build']],
  ['echo hi $(touch x)', 'Bash(echo hi $(touch x))', ['echo hi $(rm x)', 'touch x']],
  ['sudo make install', 'Bash(sudo make install)', ['sudo rm x', 'sudo make install && sudo rm x']],
  ['timeout 60 cargo build --release', 'Bash(cargo build:*)', ['cargo install x', 'timeout 60 cargo build && rm x']],
];

beforeAll(async () => {
  await loadShellParser();
});

const decide = (command: string, rule: string) =>
  decidePermission(
    bashTool,
    { command },
    { ...testContext(), toolUseId: 't' },
    { mode: 'default', rules: rulesFromLists({ allow: [rule] }, 'session').rules, unattended: false },
  );

describe('the rule offered for remembering a Bash approval', () => {
  it.each(ROWS)('%j → %s', async (command, rule, stillAsked) => {
    expect(await suggestRule('Bash', { command })).toBe(rule);
    expect((await decide(command, rule)).behavior).toBe('allow');
    for (const other of stillAsked) expect([other, (await decide(other, rule)).behavior]).toEqual([other, 'ask']);
  });

  it('offers a path-taking tool its folder, and other tools their name', async () => {
    expect(await suggestRule('Edit', { file_path: '/workspace/src/a.ts' })).toBe('Edit(/workspace/src/*)');
    expect(await suggestRule('WebFetch', { url: 'https://example.com/docs?q=1' })).toBe('WebFetch(domain:example.com)');
    expect(await suggestRule('WebFetch', { url: 'not a url' })).toBe('WebFetch');
  });
});
