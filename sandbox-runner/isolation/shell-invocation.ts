/**
 * The arguments after `/bin/bash` that run a command (docs/tools.md, "Bash"), so
 * that bash's own messages read the same: `$0` is `/bin/bash` and the command starts on line 1
 * (`/bin/bash: line 1: NAME: command not found`). The prelude (traps, limits, setup) shares that
 * first line, its newline-ended commands joined with `; `, and the command itself runs through
 * `eval "$1"`, which numbers its lines from the line the eval is on.
 */
export function shellInvocation(prelude: string, command: string): string[] {
  const firstLine = prelude
    .split('\n')
    .filter((line) => line.trim() !== '')
    .join('; ');
  return ['-c', firstLine ? `${firstLine}; eval "$1"` : 'eval "$1"', '/bin/bash', command];
}
