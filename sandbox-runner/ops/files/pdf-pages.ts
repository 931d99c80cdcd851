import type { PDFDocument } from 'pdf-lib';
import { ToolInputError } from '../../workspace/tool-input-error.ts';

/**
 * The pages first..last (1-based, last clamped to the document) as a PDF of their own, so a
 * page range reaches the model as a document block of just those pages.
 */
export async function extractPdfPages(
  bytes: Uint8Array,
  range: { first: number; last: number },
  virtualPath: string,
): Promise<{ bytes: Uint8Array; first: number; last: number; total: number }> {
  // Loaded on use (~1 s here): every new runner process is a cold start, and few read page ranges.
  const { PDFDocument } = await import('pdf-lib');
  let source: PDFDocument;
  try {
    source = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false });
  } catch (err) {
    throw new ToolInputError(`Could not read the pages of ${virtualPath}: the PDF could not be parsed (${err instanceof Error ? err.message : String(err)}).`);
  }
  const total = source.getPageCount();
  if (range.first > total) {
    throw new ToolInputError(`Page ${range.first} is past the end of ${virtualPath}, which has ${total} page${total === 1 ? '' : 's'}.`);
  }
  const last = Math.min(range.last, total);
  const subset = await PDFDocument.create();
  const indices = Array.from({ length: last - range.first + 1 }, (_, i) => range.first - 1 + i);
  for (const page of await subset.copyPages(source, indices)) subset.addPage(page);
  return { bytes: await subset.save(), first: range.first, last, total };
}
