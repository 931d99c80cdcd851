import { createWriteStream } from 'node:fs';
import path from 'node:path';

/**
 * Where the local stack's metric documents (CloudWatch EMF lines) go. In Lambda they must be on
 * stdout, where CloudWatch Logs picks them up (the Lambda composition root keeps that default);
 * locally nothing reads stdout for them, and there they drowned what tools print (a test log,
 * `npm run parity`'s result lines). So: appended to `<data>/metrics.jsonl`, and copied to
 * stderr at log level `debug`.
 */
export function createLocalMetricsSink(dataDir: string, logLevel: string): { write(line: string): void; close(): Promise<void> } {
  const file = createWriteStream(path.join(dataDir, 'metrics.jsonl'), { flags: 'a' });
  // A full disk must not end a turn: the metric is lost, the turn goes on.
  file.on('error', () => undefined);
  return {
    write(line) {
      file.write(`${line}\n`);
      if (logLevel === 'debug') process.stderr.write(`${line}\n`);
    },
    close: () => new Promise<void>((resolve) => file.end(() => resolve())),
  };
}
