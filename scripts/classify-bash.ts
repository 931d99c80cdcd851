import { createInterface } from 'node:readline';
import { loadShellParser } from '../functions/tools/bash/shell-parser.ts';
import { isReadOnlyCommand } from '../functions/tools/bash/classify-command.ts';

/**
 * `npm run --silent classify-bash`: one JSON string per input line (a shell command), one line
 * out: `read-only` or `not-read-only`, as the Bash tool decides isReadOnly/isConcurrencySafe.
 */
await loadShellParser();
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  let command: unknown;
  try {
    command = JSON.parse(line);
  } catch {
    command = undefined;
  }
  if (typeof command !== 'string') {
    console.log('not-read-only');
    continue;
  }
  console.log(isReadOnlyCommand(command) ? 'read-only' : 'not-read-only');
}
