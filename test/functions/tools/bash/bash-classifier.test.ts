import { beforeAll, describe, expect, it } from 'vitest';
import { isReadOnlyCommand } from '../../../../functions/tools/bash/classify-command.ts';
import { loadShellParser } from '../../../../functions/tools/bash/shell-parser.ts';

const READ_ONLY = [
  'ls', 'ls -la', 'ls -la src/', 'pwd', 'cat README.md', 'cat a.txt b.txt', 'head -n 20 file.ts', 'tail -n 5 log.txt', 
  'grep -rn "TODO" src', 'grep -c foo file', 'rg foo', 'rg -n "fn main" --type rust', 'echo hello', 
  'which node', 'whoami', 'id -u', 'date', 'date +%s', 'uname -a', 'df -h', 'du -sh .', 'file image.png', 'stat package.json',
  'basename /a/b/c.txt', 'dirname /a/b/c.txt', 'realpath .', 'readlink -f link', 'tree -L 2', 'diff a.txt b.txt', 'cmp a b',
  'cut -d: -f1 /workspace/data.csv', 'sort file.txt', 'sort -rn file.txt', 'wc -l src/a.ts', 'echo "*.ts"', 'uniq -c', 'nl file', 'od -c file', 'strings bin',
  'jq .name package.json', 'true', 'test -f package.json', 'seq 1 10', 'find . -name "*.ts"', 'find src -type f -newer x',
  'sed -n 1,5p file', 'cd src', 'cd src && ls', 'ps aux', 'sha256sum file', 'base64 file',
  'git status', 'git log --oneline -n 5', 'git diff HEAD~1', 'git show HEAD:README.md', 'git branch -a', 'git branch --show-current',
  'git tag', 'git remote -v', 'git config --get user.name', 'git rev-parse HEAD', 'git ls-files', 'git blame file.ts',
  'git stash list', 'git grep foo', 'git describe --tags', 'git shortlog -s',
  'ls | wc -l', 'cat file | grep foo | sort | uniq -c', 'ls && pwd', 'ls || echo none', 'ls; pwd', 'ls 2>&1',
  'ls 2>/dev/null', "echo 'single $quoted'", 
  'tail -n 3 a | head -n 1', 'find . -maxdepth 1 -type d', 'echo a && echo b || echo c',
];

const NOT_READ_ONLY = [
  // Claude Code 2.1.88 asks before these (observed): globs, expansions, tests, subshells, input
  // redirection, heredocs/newlines, comments, git global options, sed substitutions.
  'wc -l *.ts', 'echo "$HOME"', 'printf "%s\\n" a b', 'sort -u -k2 file.txt', 'xxd file', '[ -d src ]', 'env',
  'git -C sub status', 'git --no-pager log', '(ls; pwd)', 'grep foo < input.txt', 'cat <<EOF\nplain text\nEOF',
  'ls # comment', 'wc -c < file', "sed 's/a/b/g' file",
  // Reading outside the workspace is not read-only here either.
  'cut -d: -f1 /etc/passwd', 'cat ~/.ssh/id_rsa', 'ls /root', 'cat /workspace/../etc/passwd', 'ls /workspace2',
  'rm -rf /', 'rm file', 'mv a b', 'cp a b', 'mkdir x', 'touch x', 'chmod +x f', 'tee out.txt', 'npm install', 'node script.js',
  'python3 -c "print(1)"', 'curl https://example.com', 'ls > out.txt', 'echo hi >> log.txt', 'cat a > b', 'ls &> all.log',
  'echo $(rm -rf /)', 'echo `whoami`', 'cat <(ls)', 'diff <(ls a) <(ls b)', 'FOO=bar ls', 'export FOO=bar', 'cd src && git status',
  'cd .. && git log', 'find . -exec rm {} \\;', 'find . -delete', 'find . -execdir cat {} +', 'find . -fprint out.txt',
  'sed -i s/a/b/ file', "sed -i'' 's/a/b/' file", "sed -e 's/a/b/w out.txt' file", "sed '1e rm -rf x' file", 'sed -f script.sed file',
  'sort -o out.txt in.txt', 'tree -o out.txt', 'uniq in.txt out.txt', 'xxd -r dump bin', 'date -s "2020-01-01"', 'hostname evil',
  'tail -f log', 'rg --pre ./evil foo', 'git commit -m x', 'git push', 'git checkout main', 'git reset --hard', 'git branch new-branch',
  'git branch -D old', 'git tag v1', 'git remote add o url', 'git config user.name x', 'git stash', 'git stash pop',
  'git -c core.pager=evil log', 'git diff --output=x', 'git clean -fdx', 'git fetch', 'env rm -rf /', 'xargs rm', 'ls | xargs rm',
  'awk "{print}" file', 'bash -c ls', 'sh script.sh', 'eval ls', 'exec ls', 'source env.sh', '. env.sh', 'ls &', 'sudo ls',
  'f() { rm x; }', 'for f in *; do rm $f; done', 'if true; then ls; fi', 'while true; do ls; done', 'echo ${x:=y}', 'echo $((1+2))',
  'cat <<EOF > out.txt\nx\nEOF', 'cat <<EOF\n$(rm -rf /)\nEOF', 'ls $(pwd)', '"ls" -la', '$CMD', 'ls (', '', '   ', 'echo "unterminated',
  'unknown-command --flag', 'make', 'kill 1', 'dd if=/dev/zero of=x', 'ln -s a b', 'truncate -s 0 f',
];

describe('the Bash read-only classifier', () => {
  beforeAll(async () => {
    await loadShellParser();
  });

  it('covers at least 100 commands', () => {
    expect(READ_ONLY.length + NOT_READ_ONLY.length).toBeGreaterThanOrEqual(100);
  });

  it.each(READ_ONLY)('read-only: %s', (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });

  it.each(NOT_READ_ONLY)('not read-only: %s', (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });
});
