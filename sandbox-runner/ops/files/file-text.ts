import { promises as fs } from 'node:fs';

export type TextEncoding = 'utf8' | 'utf16le';
export type LineEndings = 'LF' | 'CRLF';

export interface TextFile {
  /** Decoded text with CRLF turned into LF (what Edit matches against). */
  content: string;
  encoding: TextEncoding;
  lineEndings: LineEndings;
}

/** Decodes a file as an editor would: a UTF-16LE byte-order mark picks UTF-16LE, else UTF-8. */
export function decodeText(bytes: Buffer): TextFile {
  const encoding: TextEncoding = bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf16le' : 'utf8';
  const raw = bytes.toString(encoding);
  return { content: raw.replaceAll('\r\n', '\n'), encoding, lineEndings: detectLineEndings(raw) };
}

export async function readTextFile(realPath: string): Promise<TextFile> {
  return decodeText(await fs.readFile(realPath));
}

/** The file's dominant line ending, so a local edit does not restyle the whole file. */
function detectLineEndings(raw: string): LineEndings {
  let crlf = 0;
  let lf = 0;
  for (let i = raw.indexOf('\n'); i !== -1; i = raw.indexOf('\n', i + 1)) {
    if (i > 0 && raw[i - 1] === '\r') crlf++;
    else lf++;
  }
  return crlf > lf ? 'CRLF' : 'LF';
}

export async function writeTextFile(realPath: string, content: string, encoding: TextEncoding, lineEndings: LineEndings): Promise<void> {
  const text = lineEndings === 'CRLF' ? content.replace(/\r?\n/g, '\r\n') : content;
  await fs.writeFile(realPath, Buffer.from(text, encoding));
}
