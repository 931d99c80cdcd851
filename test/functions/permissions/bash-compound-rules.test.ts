import { beforeAll, describe, expect, it } from 'vitest';
import { decidePermission } from '../../../functions/permissions/decide.ts';
import { rulesFromLists } from '../../../functions/permissions/rule-syntax.ts';
import type { PermissionContext, PermissionMode, RuleLists } from '../../../functions/permissions/types.ts';
import { bashTool } from '../../../functions/tools/bash-tool.ts';
import { loadShellParser } from '../../../functions/tools/bash/shell-parser.ts';
import { testContext } from '../../support/fake-tools.ts';

/**
 * Bash content rules against compound commands, through the real Bash tool (its shell grammar
 * split) and the real decision. Each row: the command, the rules, the decision, and the text the
 * model (or the person asked) reads — which names the part that was denied or needs approval.
 */
const ECHO_HI: RuleLists = { allow: ['Bash(echo hi:*)'] };
const NO_RM: RuleLists = { deny: ['Bash(rm:*)'] };
const MAKE: RuleLists = { allow: ['Bash(make build:*)', 'Bash(npm test)'] };
const PUSH: RuleLists = { ask: ['Bash(git push:*)'], allow: ['Bash(echo:*)'] };
const MIXED: RuleLists = { allow: ['Bash(make build:*)'], deny: ['Bash(rm:*)', 'Bash(curl:*)'] };

const ASK = "Claude requested permissions to use Bash, but you haven't granted it yet.";
const PUSH_RULE = "Permission rule 'Bash(git push:*)' from session settings requires approval for this Bash command";
const denied = (command: string) => `Permission to use Bash with command ${command} has been denied.`;
const needs = (...parts: string[]) =>
  `This Bash command contains multiple operations. The following ${parts.length === 1 ? 'part requires' : 'parts require'} approval: ${parts.join(', ')}`;
const unknown = (part: string) =>
  `This Bash command runs a program that is only known when it runs (${part}), so it cannot be checked against the permission rules; it requires approval.`;
const UNPARSABLE = 'This Bash command could not be parsed, so it cannot be checked against the permission rules; it requires approval.';

type Row = [command: string, rules: RuleLists, behavior: 'allow' | 'deny' | 'ask', message?: string];

const ROWS: Row[] = [
  // allow: the rule must cover every part that does not only read
  ['echo hi', ECHO_HI, 'allow'],
  ['echo hi && touch x1', ECHO_HI, 'ask', needs('touch x1')],
  ['echo hi ; touch x2', ECHO_HI, 'ask', needs('touch x2')],
  ['echo hi $(touch x3)', ECHO_HI, 'ask', needs('echo hi $(touch x3)', 'touch x3')],
  ['echo hi | tee x4', ECHO_HI, 'ask', needs('tee x4')],
  ['echo hi > x5', ECHO_HI, 'ask', ASK],
  ['echo hi > x5 && echo hi', ECHO_HI, 'ask', needs('> x5')],
  ['echo hi && echo hi there', ECHO_HI, 'allow'],
  ['echo hi\ntouch x7', ECHO_HI, 'ask', needs('touch x7')],
  ['echo hi <(touch x8)', ECHO_HI, 'ask', needs('echo hi <(touch x8)', 'touch x8')],
  ['echo hi || touch x9', ECHO_HI, 'ask', needs('touch x9')],
  ["echo 'hi && touch x10'", ECHO_HI, 'allow'],
  ['echo hi `touch x6`', ECHO_HI, 'ask', needs('echo hi `touch x6`', 'touch x6')],
  ['echo hi & touch x11', ECHO_HI, 'ask', needs('touch x11')],
  ['(echo hi; touch x12)', ECHO_HI, 'ask', needs('touch x12')],
  ['{ echo hi; touch x13; }', ECHO_HI, 'ask', needs('touch x13')],
  ['echo hi && FOO=1 touch x14', ECHO_HI, 'ask', needs('FOO=1 touch x14')],
  ['make build', MAKE, 'allow'],
  ['make build && make clean', MAKE, 'ask', needs('make clean')],
  ['make build; echo ok', MAKE, 'allow'],
  ['make build | tee log', MAKE, 'ask', needs('tee log')],
  ['FOO=1 make build', MAKE, 'ask', ASK],
  ['NODE_ENV=test make build', MAKE, 'allow'],
  ['timeout 5 make build', MAKE, 'allow'],
  ['timeout -s KILL 5 make build', MAKE, 'allow'],
  ['nice -n 5 make build', MAKE, 'allow'],
  ['nohup make build', MAKE, 'allow'],
  ['time make build', MAKE, 'allow'],
  ['time -p make build', MAKE, 'allow'],
  ['/usr/bin/time -o t make build', MAKE, 'ask', ASK],
  ['/usr/bin/timeout 5 make build', MAKE, 'ask', ASK],
  ['stdbuf -o0 make build', MAKE, 'allow'],
  ['env make build', MAKE, 'ask', ASK],
  ['sudo make build', MAKE, 'ask', ASK],
  ["bash -c 'make build'", MAKE, 'ask', ASK],
  ['make build 2>&1 > /dev/null', MAKE, 'allow'],
  ['make build > out.txt', MAKE, 'ask', ASK],
  ['make build >> log.txt 2>&1 && make build', MAKE, 'ask', needs('>> log.txt')],
  ['cd sub && make build', MAKE, 'allow'],
  ['cd /tmp && make build', MAKE, 'ask', needs('cd /tmp')],
  ['cd .. && make build', MAKE, 'ask', needs('cd ..')],
  ['make build && git status', MAKE, 'allow'],
  ['make builds', MAKE, 'ask', ASK],
  ['make build\nmake clean', MAKE, 'ask', needs('make clean')],
  ['make build || true', MAKE, 'allow'],
  ['/usr/bin/make build', MAKE, 'ask', ASK],
  ['make  build', MAKE, 'allow'],
  ['npm test', MAKE, 'allow'],
  ['npm test -- --ci', MAKE, 'ask', ASK],
  ['make build && npm test', MAKE, 'allow'],
  ['make build $(date)', MAKE, 'ask', needs('make build $(date)')],
  ['make build "$HOME"', MAKE, 'allow'],
  ['X=1; make build', MAKE, 'ask', needs('X=1')],
  ['export X=1 && make build', MAKE, 'ask', needs('export X=1')],
  ['f() { make build; }; f', MAKE, 'ask', needs('f() { make build; }', 'f')],
  ['for i in 1 2; do make build; done', MAKE, 'ask', needs('for i in 1 2; do make build; done')],
  ['make build && make build -j2', MAKE, 'allow'],
  ['(make build)', MAKE, 'allow'],
  ['make build &', MAKE, 'allow'],
  ['make build < a.txt', MAKE, 'allow'],
  ['make build && cat < /etc/passwd', MAKE, 'ask', needs('cat')],
  ['make build 2>&1 > 1', MAKE, 'ask', ASK],
  ['cd ~ && make build', MAKE, 'ask', needs('cd ~')],
  ['cd sub && git status', MAKE, 'ask', needs('git status')],
  // deny: a deny rule that matches any part denies, naming the command (or its pipeline stage)
  ['rm a.txt', NO_RM, 'deny', denied('rm a.txt')],
  ['echo x && rm a.txt', NO_RM, 'deny', denied('echo x && rm a.txt')],
  ['FOO=1 rm a.txt', NO_RM, 'deny', denied('FOO=1 rm a.txt')],
  ['/bin/rm a.txt', NO_RM, 'deny', denied('/bin/rm a.txt')],
  ['echo x; rm a.txt', NO_RM, 'deny', denied('echo x; rm a.txt')],
  ['echo x | rm a.txt', NO_RM, 'deny', denied('rm a.txt')],
  ['echo $(rm a.txt)', NO_RM, 'deny', denied('echo $(rm a.txt)')],
  ['(rm a.txt)', NO_RM, 'deny', denied('(rm a.txt)')],
  ['timeout 5 rm a.txt', NO_RM, 'deny', denied('timeout 5 rm a.txt')],
  ['nice -n 5 rm a.txt', NO_RM, 'deny', denied('nice -n 5 rm a.txt')],
  ['env rm a.txt', NO_RM, 'deny', denied('env rm a.txt')],
  ['env -i PATH=/bin rm a.txt', NO_RM, 'deny', denied('env -i PATH=/bin rm a.txt')],
  ['sudo -u root rm a.txt', NO_RM, 'deny', denied('sudo -u root rm a.txt')],
  ["bash -c 'rm a.txt'", NO_RM, 'deny', denied("bash -c 'rm a.txt'")],
  ['sh -c "echo ok && rm a.txt"', NO_RM, 'deny', denied('sh -c "echo ok && rm a.txt"')],
  ['eval rm a.txt', NO_RM, 'deny', denied('eval rm a.txt')],
  ['xargs rm < a.txt', NO_RM, 'deny', denied('xargs rm < a.txt')],
  ['echo a.txt | xargs -n 1 rm', NO_RM, 'deny', denied('xargs -n 1 rm')],
  ['\\rm a.txt', NO_RM, 'deny', denied('\\rm a.txt')],
  ["'rm' a.txt", NO_RM, 'deny', denied("'rm' a.txt")],
  ['r"m" a.txt', NO_RM, 'deny', denied('r"m" a.txt')],
  ['command rm a.txt', NO_RM, 'deny', denied('command rm a.txt')],
  ['exec rm a.txt', NO_RM, 'deny', denied('exec rm a.txt')],
  ['echo x\nrm a.txt', NO_RM, 'deny', denied('echo x\nrm a.txt')],
  ['echo `rm a.txt`', NO_RM, 'deny', denied('echo `rm a.txt`')],
  ['if true; then rm a.txt; fi', NO_RM, 'deny', denied('if true; then rm a.txt; fi')],
  ['for f in a.txt; do rm $f; done', NO_RM, 'deny', denied('for f in a.txt; do rm $f; done')],
  ['find . -name a.txt -exec rm {} \\;', NO_RM, 'deny', denied('find . -name a.txt -exec rm {} \\;')],
  ['cat <<EOF\n$(rm a.txt)\nEOF', NO_RM, 'deny', denied('cat <<EOF\n$(rm a.txt)\nEOF')],
  ['f() { rm a.txt; }; f', NO_RM, 'deny', denied('f() { rm a.txt; }; f')],
  ['export X=$(rm a.txt)', NO_RM, 'deny', denied('export X=$(rm a.txt)')],
  ['echo x && rm a.txt | cat', NO_RM, 'deny', denied('echo x && rm a.txt')],
  ['rm a.txt | cat && echo y', NO_RM, 'deny', denied('rm a.txt')],
  ['  rm a.txt  ', NO_RM, 'deny', denied('  rm a.txt  ')],
  ['rm a.txt; echo hi)', NO_RM, 'deny', denied('rm a.txt; echo hi)')],
  ['echo rm a.txt', NO_RM, 'allow'],
  ["echo 'rm a.txt'", NO_RM, 'allow'],
  ['rmdir x', NO_RM, 'ask', ASK],
  ['$X a.txt', NO_RM, 'ask', unknown('$X a.txt')],
  ['"$(echo rm)" a.txt', NO_RM, 'ask', unknown('"$(echo rm)" a.txt')],
  ['echo hi)', NO_RM, 'ask', UNPARSABLE],
  ['/bin/r? a.txt', NO_RM, 'ask', unknown('/bin/r? a.txt')],
  ['r{m,} a.txt', NO_RM, 'ask', unknown('r{m,} a.txt')],
  ['coproc rm a.txt', NO_RM, 'deny', denied('coproc rm a.txt')],
  ['rm a.txt &', NO_RM, 'deny', denied('rm a.txt &')],
  ['timeout 5 rm "$F"', NO_RM, 'deny', denied('timeout 5 rm "$F"')],
  ['find . -exec /bin/rm {} +', NO_RM, 'deny', denied('find . -exec /bin/rm {} +')],
  ['sudo "$C" a.txt', NO_RM, 'ask', unknown('sudo "$C" a.txt')],
  ['timeout 5 bash -c "$X"', NO_RM, 'ask', unknown('timeout 5 bash -c "$X"')],
  ["su -c 'rm a.txt'", NO_RM, 'deny', denied("su -c 'rm a.txt'")],
  ['[[ -f a.txt ]] && rm a.txt', NO_RM, 'deny', denied('[[ -f a.txt ]] && rm a.txt')],
  ['echo x > >(rm a.txt)', NO_RM, 'deny', denied('echo x > >(rm a.txt)')],
  ['bash -c "sh -c \'rm a.txt\'"', NO_RM, 'deny', denied('bash -c "sh -c \'rm a.txt\'"')],
  ['busybox rm a.txt', NO_RM, 'deny', denied('busybox rm a.txt')],
  ["env -S 'rm a.txt'", NO_RM, 'deny', denied("env -S 'rm a.txt'")],
  ['echo a | xargs sh -c "rm a.txt"', NO_RM, 'deny', denied('xargs sh -c "rm a.txt"')],
  // ask rules: a match on any part asks
  ['git push', PUSH, 'ask', PUSH_RULE],
  ['echo a && git push origin', PUSH, 'ask', needs('git push origin')],
  ['FOO=1 git push', PUSH, 'ask', PUSH_RULE],
  ['timeout 5 git push', PUSH, 'ask', PUSH_RULE],
  ['echo a | git push', PUSH, 'ask', needs('git push')],
  ['git pushx', PUSH, 'ask', ASK],
  ['echo a && echo b $(date)', PUSH, 'ask', needs('echo b $(date)')],
  // several rules at once: deny wins over allow
  ['make build && rm a.txt', MIXED, 'deny', denied('make build && rm a.txt')],
  ['rm a.txt | curl x', MIXED, 'deny', denied('rm a.txt')],
  ['make build; curl x', MIXED, 'deny', denied('make build; curl x')],
  ['make build', MIXED, 'allow'],
];

function permissions(lists: RuleLists, mode: PermissionMode = 'default', unattended = false): PermissionContext {
  return { mode, rules: rulesFromLists(lists, 'session').rules, unattended };
}
const decide = (command: string, ctx: PermissionContext) => decidePermission(bashTool, { command }, { ...testContext(), toolUseId: 't' }, ctx);

beforeAll(async () => {
  await loadShellParser();
});

describe('Bash rules on compound commands', () => {
  it('has at least 60 commands in its table', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
  });

  it.each(ROWS)('%j under %j: %s', async (command, rules, behavior, message) => {
    const decision = await decide(command, permissions(rules));
    expect(decision.behavior).toBe(behavior);
    if (message !== undefined) expect('message' in decision ? decision.message : undefined).toBe(message);
  });

  it("denies, with the don't-ask text, a part no rule covers when nobody can be asked", async () => {
    const decision = await decide('make build && make clean', permissions(MAKE, 'default', true));
    expect(decision).toMatchObject({ behavior: 'deny' });
    expect((decision as { message: string }).message).toMatch(/^Permission to use Bash has been denied because Claude Code is running in don't ask mode\./);
  });

  it('keeps deny rules in bypassPermissions, and asks there about a command it cannot check', async () => {
    expect(await decide('echo x && rm a.txt', permissions({ ...NO_RM, allow: ['Bash'] }, 'bypassPermissions'))).toMatchObject({
      behavior: 'deny',
      message: denied('echo x && rm a.txt'),
    });
    expect(await decide('$X a.txt', permissions(NO_RM, 'bypassPermissions'))).toMatchObject({ behavior: 'ask', message: unknown('$X a.txt') });
    expect(await decide('make clean', permissions(NO_RM, 'bypassPermissions'))).toMatchObject({ behavior: 'allow' });
  });

  it('lets an exact rule allow exactly the command it names, compound or not', async () => {
    const exact = permissions({ allow: ['Bash(echo hi && touch x)'] });
    expect(await decide('echo hi && touch x', exact)).toMatchObject({ behavior: 'allow' });
    expect(await decide('echo hi && touch y', exact)).toMatchObject({ behavior: 'ask', message: needs('touch y') });
  });
});
