import { spawn } from 'node:child_process';
import { rgPath } from '@vscode/ripgrep';

export const RIPGREP_TIMEOUT_MS = 20_000;
const MAX_STDOUT_BYTES = 64 * 1024 * 1024;

export class RipgrepTimeoutError extends Error {
  override name = 'RipgrepTimeoutError';
}

/**
 * Runs the project's own ripgrep (from @vscode/ripgrep) and returns its output lines. Exit 1
 * (nothing matched) and exit 2 (e.g. an unreadable file or a bad pattern) give what was printed;
 * a timeout with nothing printed is an error, never an empty result, so "no matches" is never
 * confused with "did not finish".
 */
export function runRipgrep(args: string[], opts: { cwd: string; timeoutMs?: number }): Promise<string[]> {
  const timeoutMs = opts.timeoutMs ?? RIPGREP_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let killed = false;
    child.stdout.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= MAX_STDOUT_BYTES) chunks.push(c);
      else if (!killed) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.resume();
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', () => {
      clearTimeout(timer);
      let lines = Buffer.concat(chunks)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((l) => l.replace(/\r$/, ''))
        .filter(Boolean);
      // A killed search may have stopped mid-line.
      if (killed && lines.length > 0) lines = lines.slice(0, -1);
      if (killed && lines.length === 0) {
        reject(
          new RipgrepTimeoutError(
            `Ripgrep search timed out after ${Math.round(timeoutMs / 1000)} seconds. The search may have matched files but did not complete in time. Try searching a more specific path or pattern.`,
          ),
        );
        return;
      }
      resolve(lines);
    });
  });
}
