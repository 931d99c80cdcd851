import { readFile } from 'node:fs/promises';
import { request } from 'node:http';

export interface ChunkedUploadResult {
  status: number;
  body: string;
  /** Bytes written when the answer arrived. */
  sentBeforeAnswer: number;
  /** Whether the whole body had been written by then. */
  sentAll: boolean;
}

/**
 * POSTs `totalBytes` of spaces as a chunked body (no Content-Length), 1 MiB per write with the
 * socket's backpressure, and stops writing as soon as the server answers: what a client that
 * streams a huge body sees of a server that refuses it early or reads it whole.
 */
export function chunkedUpload(url: string, headers: Record<string, string>, totalBytes: number): Promise<ChunkedUploadResult> {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body, sentBeforeAnswer, sentAll: sentBeforeAnswer >= totalBytes });
      });
    });
    // The server may close the connection on a refused body while this side still writes.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const write = () => {
      while (!answered && !req.destroyed && sent < totalBytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      if (!answered && sent >= totalBytes) req.end();
    };
    write();
  });
}

/** The peak resident memory of a process so far, from /proc (Linux). */
export async function peakRssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}
