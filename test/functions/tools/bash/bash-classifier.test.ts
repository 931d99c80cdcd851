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
  // Claude Code 2.1.88's allow-lists (docs/tools.md), the direction that spares approvals:
  // version and help queries of common tools,
  'node -v', 'node --version', 'python3 --version', 'python --version', 'grep --version', 'sort --help', 'rg --version',
  'git status --short', 'arch --help', 'claude --help',
  // read-only container and network listing,
  'docker ps', 'docker ps -a', 'docker images', 'docker logs --tail 50 web', 'docker inspect -f "{{.State}}" web', 'ip addr',
  'ifconfig', 'ifconfig eth0', 'netstat -an', 'ss -tlnp', 'lsof -i', 'pgrep -l node',
  // shell built-ins that only print, manual pages, following a file,
  'history', 'history 20', 'alias', 'man ls', 'man -k socket', 'help cd', 'info -w ls', 'tail -f app.log', 'tail -F -n 20 app.log',
  // read-only commands fed through xargs,
  'git ls-files | xargs wc -l', 'find . -name "*.ts" | xargs grep -n TODO', 'ls | xargs -n 1 echo', 'cat list | xargs -0 head -n 1',
  // sed without in-place editing inside a pipeline, and printing lines,
  "cat file | sed 's/foo/bar/g'", "git log | sed -E 's/^x/y/'", 'sed -n 1p file', "sed -n '3,9p;12p' file",
  // tag and branch listing with a pattern, and the empty command.
  "git tag -l 'v1.*'", "git tag --list 'v2*' --sort=-version:refname", "git branch --list 'feat/*'", 'git tag -n 3 -l',
  '', '   ',
  // Flags the lists allow.
  'sort -k 2 -t , file.csv', 'sort -u file', 'date -u +%Y', 'date -d yesterday +%F', 'hostname -f', 'ps -ef', 'ps aux',
  'grep -A3 -n foo file', 'rg -C2 foo', 'rg --type ts foo', 'find . ! -name "*.js"', 'git ls-remote origin', 'git ls-remote --tags',
  'git remote show origin', 'git log -5', 'git show stash@{0}', 'uniq -c', 'md5sum -c sums.md5', 'file -b image.png',
  "jq '.[] | .name' data.json", "echo '$HOME is literal here'", 'tree -a -L 2', 'ls -la | sort -r',
  // `!` in other commands' words is only read (the reference ran these without asking).
  'ls !!', 'grep foo !x', 'ls foo!bar', 'echo "a!b"', 'cat "!x"', 'wc -l !x', "git tag -l '!x'",
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
  'rg --pre ./evil foo', 'git commit -m x', 'git push', 'git checkout main', 'git reset --hard', 'git branch new-branch',
  'git branch -D old', 'git tag v1', 'git remote add o url', 'git config user.name x', 'git stash', 'git stash pop',
  'git -c core.pager=evil log', 'git diff --output=x', 'git clean -fdx', 'git fetch', 'env rm -rf /', 'xargs rm', 'ls | xargs rm',
  'awk "{print}" file', 'bash -c ls', 'sh script.sh', 'eval ls', 'exec ls', 'source env.sh', '. env.sh', 'ls &', 'sudo ls',
  'f() { rm x; }', 'for f in *; do rm $f; done', 'if true; then ls; fi', 'while true; do ls; done', 'echo ${x:=y}', 'echo $((1+2))',
  'cat <<EOF > out.txt\nx\nEOF', 'cat <<EOF\n$(rm -rf /)\nEOF', 'ls $(pwd)', '"ls" -la', '$CMD', 'ls (', 'echo "unterminated',
  'unknown-command --flag', 'make', 'kill 1', 'dd if=/dev/zero of=x', 'ln -s a b', 'truncate -s 0 f',
  // Claude Code 2.1.88's allow-lists (docs/tools.md), the unsafe direction:
  // commands and flags that print the environment,
  'printenv', 'printenv AWS_SECRET_ACCESS_KEY', 'set', 'export -p', 'declare -p', 'declare -x', 'typeset -p', 'env -0', 'ps e',
  'ps auxe', 'ps -ef e', 'jq -n env', "jq -n '$ENV.HOME'",
  // writes through an option, or an operand that sets something,
  'sort -o out.txt -u in.txt', 'sort --output=out.txt in.txt', 'date 010203042030', 'date --set=tomorrow', 'date -f dates.txt',
  'hostname -F name.txt', 'hostname -b box', 'tree -R -H . -L 2', 'file -C -m magic', 'info -o out.txt ls', 'lsof +m/tmp/m',
  'git log --output=out.txt', 'git diff --output out.txt', 'git show --output=x HEAD', 'git tag -a v1 -m x', 'git branch -m a b',
  'git reflog expire --all', 'git reflog delete HEAD@{1}', 'tput reset', 'tput clear', 'uniq -c in.txt', 'base64 -o out.b64 f',
  'git remote get-url origin', 'git remote prune origin', 'git stash drop',
  // network reach,
  'git ls-remote https://example.com/repo.git', 'git ls-remote git@github.com:o/r.git', 'git ls-remote example.com:repo',
  'git fetch origin', 'git pull', 'git remote update', 'git ls-remote --server-option=x origin', 'ip route add x', 'ip link',
  // history expansion in an unquoted word of echo (with `$`, of any command),
  'echo !!', 'echo !-1', 'echo foo!bar', 'echo hi!', 'cat !$',
  // search-tool flags not on the lists,
  'rg --pre=cat foo', 'rg --search-zip foo', 'rg --no-config --pre cat x', 'grep --include-from=x foo', 'find . -fprintf out %p',
  'find . -fls out', 'find . -ok rm {} ;', 'find . -okdir rm {} +', 'find . -fprint0 out', 'fd -x rm', 'fd --exec-batch rm',
  'fd -l', 'egrep foo file', 'fgrep foo file', 'xargs -i echo', 'ls | xargs sh -c id', 'ls | xargs -I {} cp {} /tmp',
  'ls | xargs -rI echo sh', 'ls | xargs -E= EOF echo',
  // `$` inside a sed script, and other sed shapes that are not plain printing,
  "sed -n '$p' file", "sed '$d' file", "sed -n '/x/,$p' file", "sed -n 'p;$=' file", 'sed 1d file', "cat f | sed 'y/ab/ba/'",
  "cat f | sed -e 's/a/b/' -e 's/c/d/'", "cat f | sed 's/a/b/w out'", "cat f | sed 's/a/b/e'", 'sed -n 1p -i file', 'sed --version',
  // `$` or a backquote as text, which the reference cannot check, and brace expansion.
  "cat '$file'", "grep '$x' file", "git log --format='%H`x`'", 'ls {a,b}', 'cat f{1..3}',
  // Commands the reference has no rule for.
  'tty', 'look foo', 'cksum f', '[ -f x ]', 'git --version', 'npm --version', 'docker run x', 'docker rm x', 'ip addr add 1.2.3.4 dev x',
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
