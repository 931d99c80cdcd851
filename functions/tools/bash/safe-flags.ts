/**
 * Flags each allow-listed command may take (docs/tools.md, "Read-only classification"): a
 * bare flag takes no value, `#` a number, `=` any string, `@` one character, `{}` only `{}`, `^` only
 * `EOF`. Any flag not listed makes the command not read-only.
 */
export const SAFE_FLAGS: Record<string, string> = {
  'git diff':
    '--stat --numstat --shortstat --name-only --name-status --color --no-color --dirstat --summary --patch-with-stat --word-diff --word-diff-regex= --color-words --no-renames --no-ext-diff --check --ws-error-highlight= --full-index --binary --abbrev# --break-rewrites --find-renames --find-copies --find-copies-harder --irreversible-delete --diff-algorithm= --histogram --patience --minimal --ignore-space-at-eol --ignore-space-change --ignore-all-space --ignore-blank-lines --inter-hunk-context# --function-context --exit-code --quiet --cached --staged --pickaxe-regex --pickaxe-all --no-index --relative= --diff-filter= -p -u -s -M -C -B -D -l -S= -G= -O= -R',
  'git log':
    '--oneline --graph --decorate --no-decorate --date= --relative-date --all --branches --tags --remotes --since= --after= --until= --before= --max-count# -n# --stat --numstat --shortstat --name-only --name-status --color --no-color --patch -p --no-patch --no-ext-diff -s --author= --committer= --grep= --abbrev-commit --full-history --dense --sparse --simplify-merges --ancestry-path --source --first-parent --merges --no-merges --reverse --walk-reflogs --skip# --max-age# --min-age# --no-min-parents --no-max-parents --follow --no-walk --left-right --cherry-mark --cherry-pick --boundary --topo-order --date-order --author-date-order --pretty= --format= --diff-filter= -S= -G= --pickaxe-regex --pickaxe-all',
  'git show':
    '--oneline --graph --decorate --no-decorate --date= --relative-date --stat --numstat --shortstat --name-only --name-status --color --no-color --patch -p --no-patch --no-ext-diff -s --abbrev-commit --word-diff --word-diff-regex= --color-words --pretty= --format= --first-parent --raw --diff-filter= -m --quiet',
  'git shortlog':
    '--all --branches --tags --remotes --since= --after= --until= --before= -s --summary -n --numbered -e --email -c --committer --group= --format= --no-merges --author=',
  'git reflog':
    '--oneline --graph --decorate --no-decorate --date= --relative-date --all --branches --tags --remotes --since= --after= --until= --before= --max-count# -n# --author= --committer= --grep=',
  'git stash list': '--oneline --graph --decorate --no-decorate --date= --relative-date --all --branches --tags --remotes --max-count# -n#',
  'git ls-remote': '--branches -b --tags -t --heads -h --refs --quiet -q --exit-code --get-url --symref --sort=',
  'git status':
    '--short -s --branch -b --porcelain --long --verbose -v --untracked-files= -u= --ignored --ignore-submodules= --column --no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames= -M=',
  'git blame':
    '--color --no-color -L= --porcelain -p --line-porcelain --incremental --root --show-stats --show-name --show-number -n --show-email -e -f --date= -w --ignore-rev= --ignore-revs-file= -M -C --score-debug --abbrev# -s -l -t',
  'git ls-files':
    '--cached -c --deleted -d --modified -m --others -o --ignored -i --stage -s --killed -k --unmerged -u --directory --no-empty-directory --eol --full-name --abbrev# --debug -z -t -v -f --exclude= -x= --exclude-from= -X= --exclude-per-directory= --exclude-standard --error-unmatch --recurse-submodules',
  'git config --get':
    '--local --global --system --worktree --default= --type= --bool --int --bool-or-int --path --expiry-date -z --null --name-only --show-origin --show-scope',
  'git remote show': '-n',
  'git remote': '-v --verbose',
  'git merge-base': '--is-ancestor --fork-point --octopus --independent --all',
  'git rev-parse':
    '--verify --short= --abbrev-ref --symbolic --symbolic-full-name --show-toplevel --show-cdup --show-prefix --git-dir --git-common-dir --absolute-git-dir --show-superproject-working-tree --is-inside-work-tree --is-inside-git-dir --is-bare-repository --is-shallow-repository --is-shallow-update --path-prefix',
  'git rev-list':
    '--all --branches --tags --remotes --since= --after= --until= --before= --max-count# -n# --author= --committer= --grep= --count --reverse --first-parent --ancestry-path --merges --no-merges --min-parents# --max-parents# --no-min-parents --no-max-parents --skip# --max-age# --min-age# --walk-reflogs --oneline --abbrev-commit --pretty= --format= --abbrev# --full-history --dense --sparse --source --graph',
  'git describe': '--tags --match= --exclude= --long --abbrev# --always --contains --first-match --exact-match --candidates# --dirty --broken',
  'git cat-file': '-t -s -p -e --batch-check --allow-undetermined-type',
  'git for-each-ref': '--format= --sort= --count# --contains= --no-contains= --merged= --no-merged= --points-at=',
  'git grep':
    '-e= -E --extended-regexp -G --basic-regexp -F --fixed-strings -P --perl-regexp -i --ignore-case -v --invert-match -w --word-regexp -n --line-number -c --count -l --files-with-matches -L --files-without-match -h -H --heading --break --full-name --color --no-color -o --only-matching -A# --after-context# -B# --before-context# -C# --context# --and --or --not --max-depth# --untracked --no-index --recurse-submodules --cached --threads# -q --quiet',
  'git stash show':
    '--stat --numstat --shortstat --name-only --name-status --color --no-color --patch -p --no-patch --no-ext-diff -s --word-diff --word-diff-regex= --diff-filter= --abbrev#',
  'git worktree list': '--porcelain -v --verbose --expire=',
  'git tag': '-l --list -n# --contains= --no-contains= --merged= --no-merged= --sort= --format= --points-at= --column --no-column -i --ignore-case',
  'git branch':
    '-l --list -a --all -r --remotes -v -vv --verbose --color --no-color --column --no-column --abbrev# --no-abbrev --contains= --no-contains= --merged --no-merged --points-at= --sort= --show-current -i --ignore-case',
  'docker logs': '--follow -f --tail= -n= --timestamps -t --since= --until= --details',
  'docker inspect': '--format= -f= --type= --size -s',
  rg: '-e= --regexp= -f= -i --ignore-case -S --smart-case -F --fixed-strings -w --word-regexp -v --invert-match -c --count -l --files-with-matches --files-without-match -n --line-number -o --only-matching -A# --after-context# -B# --before-context# -C# --context# -H -h --heading --no-heading -q --quiet --column -g= --glob= -t= --type= -T= --type-not= --type-list --hidden --no-ignore -u -m# --max-count# -d# --max-depth# -a --text -z -L --follow --color= --json --stats --help --version --debug --',
  pyright:
    '--outputjson --project= -p= --pythonversion= --pythonplatform= --typeshedpath= --venvpath= --level= --stats --verbose --version --dependencies --warnings',
  xargs: '-I{} -n# -P# -L# -s# -E^ -0 -t -r -x -d@',
  file: '--brief -b --mime -i --mime-type --mime-encoding --apple --check-encoding -c --exclude= --exclude-quiet= --print0 -0 -f= -F= --separator= --help --version -v --no-dereference -h --dereference -L --magic-file= -m= --keep-going -k --list -l --no-buffer -n --preserve-date -p --raw -r -s --special-files --uncompress -z',
  sed: '--expression= -e= --quiet --silent -n --regexp-extended -r --posix -E --line-length# -l# --zero-terminated -z --separate -s --unbuffered -u --debug --help --version',
  sort: '--ignore-leading-blanks -b --dictionary-order -d --ignore-case -f --general-numeric-sort -g --human-numeric-sort -h --ignore-nonprinting -i --month-sort -M --numeric-sort -n --random-sort -R --reverse -r --sort= --stable -s --unique -u --version-sort -V --zero-terminated -z --key= -k= --field-separator= -t= --check -c --check-char-order -C --merge -m --buffer-size= -S= --parallel# --batch-size# --help --version',
  man: '-a --all -d -f --whatis -h -k --apropos -l= -w -S= -s=',
  help: '-d -m -s',
  netstat: '-a -L -l -n -f= -g -i -I= -s -r -m -v',
  ps: '-e -A -a -d -N --deselect -f -F -l -j -y -w -ww --width# -c -H --forest --headers --no-headers -n= --sort= -L -T -m -C= -G= -g= -p= --pid= -q= --quick-pid= -s= --sid= -t= --tty= -U= -u= --user= --help --info -V --version',
  base64: '-d -D --decode -b# --break# -w# --wrap# -i= --input= --ignore-garbage -h --help --version',
  grep: '-e= --regexp= -f= --file= -F --fixed-strings -G --basic-regexp -E --extended-regexp -P --perl-regexp -i --ignore-case --no-ignore-case -v --invert-match -w --word-regexp -x --line-regexp -c --count --color= --colour= -L --files-without-match -l --files-with-matches -m# --max-count# -o --only-matching -q --quiet --silent -s --no-messages -b --byte-offset -H --with-filename -h --no-filename --label= -n --line-number -T --initial-tab -u --unix-byte-offsets -Z --null -z --null-data -A# --after-context# -B# --before-context# -C# --context# --group-separator= --no-group-separator -a --text --binary-files= -D= --devices= -d= --directories= --exclude= --exclude-from= --exclude-dir= --include= -r --recursive -R --dereference-recursive --line-buffered -U --binary --help -V --version',
  sha256sum: '-b --binary -t --text -c --check --ignore-missing --quiet --status --strict -w --warn --tag -z --zero --help --version',
  sha1sum: '-b --binary -t --text -c --check --ignore-missing --quiet --status --strict -w --warn --tag -z --zero --help --version',
  md5sum: '-b --binary -t --text -c --check --ignore-missing --quiet --status --strict -w --warn --tag -z --zero --help --version',
  tree: '-a -d -l -f -x -L# -P= -I= --gitignore --gitfile= --ignore-case --matchdirs --metafirst --prune --info --infofile= --noreport --charset= --filelimit# -q -N -Q -p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J -H= --nolinks --hintro= --houtro= -T= --hyperlink --scheme= --authority= --fromfile --fromtabfile --fflinks --help --version',
  date: '-d= --date= -r= --reference= -u --utc --universal -I --iso-8601= -R --rfc-email --rfc-3339= --debug --help --version',
  hostname: '-f --fqdn --long -s --short -i --ip-address -I --all-ip-addresses -a --alias -d --domain -A --all-fqdns -v --verbose -h --help -V --version',
  info: '-f= --file= -d= --directory= -n= --node= -a --all -k= --apropos= -w --where --location --show-options --vi-keys --subnodes -h --help --usage --version',
  lsof: '-? -h -v -a -b -C -l -n -N -O -P -Q -R -t -U -V -X -H -E -F -g -i -K -L -o -r -s -S -T -x -A= -c= -d= -e= -k= -p= -u=',
  pgrep:
    '-d= --delimiter= -l --list-name -a --list-full -v --inverse -w --lightweight -c --count -f --full -g= --pgroup= -G= --group= -i --ignore-case -n --newest -o --oldest -O= --older= -P= --parent= -s= --session= -t= --terminal= -u= --euid= -U= --uid= -x --exact -F= --pidfile= -L --logpidfile -r= --runstates= --ns= --nslist= --help -V --version',
  tput: '-T= -V -x',
  ss: '-h --help -V --version -n --numeric -r --resolve -a --all -l --listening -o --options -e --extended -m --memory -p --processes -i --info -s --summary -4 --ipv4 -6 --ipv6 -0 --packet -t --tcp -M --mptcp -S --sctp -u --udp -d --dccp -w --raw -x --unix --tipc --vsock -f= --family= -A= --query= --socket= -Z --context -z --contexts -b --bpf -E --events -H --no-header -O --oneline --tipcinfo --tos --cgroup --inet-sockopt',
  fd: '-h --help -V --version -H --hidden -I --no-ignore --no-ignore-vcs --no-ignore-parent -s --case-sensitive -i --ignore-case -g --glob --regex -F --fixed-strings -a --absolute-path -L --follow -p --full-path -0 --print0 -d# --max-depth# --min-depth# --exact-depth# -t= --type= -e= --extension= -S= --size= --changed-within= --changed-before= -o= --owner= -E= --exclude= --ignore-file= -c= --color= -j# --threads# --max-buffer-time= --max-results# -1 -q --quiet --show-errors --strip-cwd-prefix --one-file-system --prune --search-path= --base-directory= --path-separator= --batch-size# --no-require-git --hyperlink= --and= --format=',
  fdfind:
    '-h --help -V --version -H --hidden -I --no-ignore --no-ignore-vcs --no-ignore-parent -s --case-sensitive -i --ignore-case -g --glob --regex -F --fixed-strings -a --absolute-path -L --follow -p --full-path -0 --print0 -d# --max-depth# --min-depth# --exact-depth# -t= --type= -e= --extension= -S= --size= --changed-within= --changed-before= -o= --owner= -E= --exclude= --ignore-file= -c= --color= -j# --threads# --max-buffer-time= --max-results# -1 -q --quiet --show-errors --strip-cwd-prefix --one-file-system --prune --search-path= --base-directory= --path-separator= --batch-size# --no-require-git --hyperlink= --and= --format=',
};
