import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { call, err, ok, useToolStack } from './tool-harness.ts';

// Expected texts were observed from Claude Code 2.1.88 driven by the scripted model (docs/tools.md).
// Refusals that come before the runner is asked are unit tests: test/functions/tools/read-tool.test.ts.
describe('Read through the runner', () => {
  const h = useToolStack();
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

  it('numbers lines with a tab, pages with offset/limit and warns about empty ranges', async () => {
    const r = await h.run({ 'a.txt': 'hello\nworld\n', 'empty.txt': '', 'crlf.txt': 'x\r\ny\n', 'long.txt': 'l1\nl2\nl3\nl4\n' }, [
      [
        call('t1', 'Read', { file_path: '/workspace/a.txt' }),
        call('t2', 'Read', { file_path: '/workspace/empty.txt' }),
        call('t3', 'Read', { file_path: '/workspace/a.txt', offset: 5 }),
        call('t4', 'Read', { file_path: '/workspace/crlf.txt' }),
        call('t5', 'Read', { file_path: '/workspace/long.txt', offset: 2, limit: 2 }),
        call('t6', 'Read', { file_path: '/workspace/long.txt', offset: 0, limit: 1 }),
      ],
    ]);
    expect(r.t1).toMatchObject(ok('1\thello\n2\tworld\n3\t'));
    expect(r.t2).toMatchObject(
      ok('<system-reminder>Warning: the file exists but is shorter than the provided offset (1). The file has 1 lines.</system-reminder>'),
    );
    expect(r.t3).toMatchObject(
      ok('<system-reminder>Warning: the file exists but is shorter than the provided offset (5). The file has 3 lines.</system-reminder>'),
    );
    expect(r.t4).toMatchObject(ok('1\tx\n2\ty\n3\t'));
    expect(r.t5).toMatchObject(ok('2\tl2\n3\tl3'));
    // offset 0 reads from the top, but the reference numbers from 0 then.
    expect(r.t6).toMatchObject(ok('0\tl1'));
  });

  it('reports missing files with the cwd and a similar name, refuses directories, and reports paths outside the workspace as missing', async () => {
    const r = await h.run({ 'a.txt': 'x', 'sub/b.txt': 'y' }, [
      [
        call('m1', 'Read', { file_path: '/workspace/a.tx' }),
        call('m2', 'Read', { file_path: 'relative.txt' }),
        call('m3', 'Read', { file_path: '/workspace/sub' }),
        call('m4', 'Read', { file_path: '/etc/passwd' }),
      ],
    ]);
    expect(r.m1).toMatchObject(err('File does not exist. Note: your current working directory is /workspace. Did you mean a.txt?'));
    expect(r.m2).toMatchObject(err('File does not exist. Note: your current working directory is /workspace.'));
    expect(r.m3).toMatchObject(err("EISDIR: illegal operation on a directory, read '/workspace/sub'"));
    expect(r.m4).toMatchObject(err('File does not exist. Note: your current working directory is /workspace.'));
  });

  it('refuses whole files over 256 KB unless a limit is given, and content over 25,000 tokens', async () => {
    const big = `${'a'.repeat(99)}\n`.repeat(3000);
    const r = await h.run({ 'big.txt': big, 'wide.txt': 'b'.repeat(120_000) }, [
      [
        call('s1', 'Read', { file_path: '/workspace/big.txt' }),
        call('s2', 'Read', { file_path: '/workspace/big.txt', limit: 2 }),
        call('s3', 'Read', { file_path: '/workspace/wide.txt' }),
      ],
    ]);
    expect(r.s1).toMatchObject(
      err(
        'File content (293KB) exceeds maximum allowed size (256KB). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.',
      ),
    );
    expect(r.s2).toMatchObject(ok(`1\t${'a'.repeat(99)}\n2\t${'a'.repeat(99)}`));
    expect(r.s3).toMatchObject(
      err(
        'File content (30000 tokens) exceeds maximum allowed tokens (25000). Use offset and limit parameters to read specific portions of the file, or search for specific content instead of reading the whole file.',
      ),
    );
  });

  it('answers a re-read of the same unchanged range with the unchanged note, and re-sends after a change', async () => {
    const r = await h.run({ 'c.txt': 'c\n' }, [
      [call('u1', 'Read', { file_path: '/workspace/c.txt' })],
      [call('u2', 'Read', { file_path: '/workspace/c.txt' })],
      [call('u3', 'Read', { file_path: '/workspace/c.txt', offset: 2 })],
      [call('u4', 'Bash', { command: 'echo d >> c.txt' })],
      [call('u5', 'Read', { file_path: '/workspace/c.txt', offset: 2 })],
    ]);
    expect(r.u2).toMatchObject(
      ok(
        'File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.',
      ),
    );
    expect(r.u3).toMatchObject(
      ok('<system-reminder>Warning: the file exists but is shorter than the provided offset (2). The file has 2 lines.</system-reminder>'),
    );
    expect(r.u5).toMatchObject(ok('2\td\n3\t'));
  });

  it('returns images as image blocks', async () => {
    const r = await h.run({ 'dot.png': { base64: PNG } }, [[call('i1', 'Read', { file_path: '/workspace/dot.png' })]]);
    expect(r.i1).toMatchObject(ok([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }]));
  });

  it('reads notebooks as cells with their outputs', async () => {
    const nb = {
      cells: [
        { cell_type: 'markdown', metadata: {}, source: ['# Title\n', 'text'] },
        {
          cell_type: 'code',
          execution_count: 1,
          metadata: {},
          source: ["print('hi')\n", 'x=1'],
          outputs: [{ output_type: 'stream', name: 'stdout', text: ['hi\n'] }],
        },
        {
          cell_type: 'code',
          execution_count: 2,
          metadata: {},
          source: '1+1',
          outputs: [{ output_type: 'execute_result', execution_count: 2, data: { 'text/plain': ['2'], 'image/png': PNG }, metadata: {} }],
        },
        { cell_type: 'code', execution_count: null, metadata: {}, source: [], outputs: [] },
        {
          cell_type: 'code',
          execution_count: 3,
          metadata: {},
          source: "raise ValueError('x')",
          outputs: [{ output_type: 'error', ename: 'ValueError', evalue: 'x', traceback: ['Traceback...', 'ValueError: x'] }],
        },
      ],
      metadata: { language_info: { name: 'python' } },
      nbformat: 4,
      nbformat_minor: 5,
    };
    const r = await h.run({ 'n.ipynb': JSON.stringify(nb) }, [[call('n1', 'Read', { file_path: '/workspace/n.ipynb' })]]);
    expect(r.n1).toMatchObject(
      ok([
        {
          type: 'text',
          text: '<cell id="cell-0"><cell_type>markdown</cell_type># Title\ntext</cell id="cell-0">\n<cell id="cell-1">print(\'hi\')\nx=1</cell id="cell-1">\n\nhi\n\n<cell id="cell-2">1+1</cell id="cell-2">\n\n2',
        },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        {
          type: 'text',
          text: '<cell id="cell-3"></cell id="cell-3">\n<cell id="cell-4">raise ValueError(\'x\')</cell id="cell-4">\n\nValueError: x\nTraceback...\nValueError: x',
        },
      ]),
    );
  });

  it('reads PDFs whole as a document block, and refuses empty files and files that are not PDFs', async () => {
    const pdf = Buffer.from(
      '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj 3 0 obj<</Type/Page/MediaBox[0 0 3 3]/Parent 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    );
    const r = await h.run({ 'd.pdf': { base64: pdf.toString('base64') }, 'bad.pdf': 'hello', 'empty.pdf': '' }, [
      [
        call('p1', 'Read', { file_path: '/workspace/d.pdf' }),
        call('p2', 'Read', { file_path: '/workspace/bad.pdf' }),
        call('p3', 'Read', { file_path: '/workspace/empty.pdf' }),
      ],
    ]);
    expect(r.p1).toMatchObject(
      ok([
        { type: 'text', text: 'PDF file read: /workspace/d.pdf (189 bytes)' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
      ]),
    );
    expect(r.p2).toMatchObject(err('File is not a valid PDF (missing %PDF- header): /workspace/bad.pdf'));
    expect(r.p3).toMatchObject(err('PDF file is empty: /workspace/empty.pdf'));
  });

  it('reads a PDF page range as a document of just those pages, and refuses a page past the end', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) doc.addPage([100 + i, 100]);
    const pdf = Buffer.from(await doc.save());
    const r = await h.run({ 'three.pdf': { base64: pdf.toString('base64') } }, [
      [call('r1', 'Read', { file_path: '/workspace/three.pdf', pages: '2-3' }), call('r2', 'Read', { file_path: '/workspace/three.pdf', pages: '5' })],
    ]);
    const [text, document] = r.r1!.content as [{ text: string }, { type: string; source: { data: string } }];
    expect(text.text).toMatch(/^PDF pages 2-3 of 3 read: \/workspace\/three\.pdf \(\d+ bytes\)$/);
    expect(document.type).toBe('document');
    const subset = await PDFDocument.load(Buffer.from(document.source.data, 'base64'));
    expect(subset.getPages().map((p) => p.getWidth())).toEqual([101, 102]);
    expect(r.r2).toMatchObject(err('Page 5 is past the end of /workspace/three.pdf, which has 3 pages.'));
  });

  it('refuses notebooks whose cells pass 256 KB, pointing to jq', async () => {
    const nb = { cells: [{ cell_type: 'markdown', metadata: {}, source: 'x'.repeat(300_000) }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
    const r = await h.run({ 'big.ipynb': JSON.stringify(nb) }, [[call('n1', 'Read', { file_path: '/workspace/big.ipynb' })]]);
    expect(r.n1).toMatchObject(
      err(
        'Notebook content (293KB) exceeds maximum allowed size (256KB). Use Bash with jq to read specific portions:\n' +
          '  cat "/workspace/big.ipynb" | jq \'.cells[:20]\' # First 20 cells\n' +
          '  cat "/workspace/big.ipynb" | jq \'.cells[100:120]\' # Cells 100-120\n' +
          '  cat "/workspace/big.ipynb" | jq \'.cells | length\' # Count total cells\n' +
          '  cat "/workspace/big.ipynb" | jq \'.cells[] | select(.cell_type=="code") | .source\' # All code sources',
      ),
    );
  });

  it('shrinks large images to fit the size and token limits, keeping the aspect ratio', async () => {
    const noise = Buffer.alloc(3000 * 1000 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 7919) % 251;
    const png = await sharp(noise, { raw: { width: 3000, height: 1000, channels: 3 } })
      .png()
      .toBuffer();
    const r = await h.run({ 'wide.png': { base64: png.toString('base64') } }, [[call('i1', 'Read', { file_path: '/workspace/wide.png' })]]);
    const [block] = r.i1!.content as { type: string; source: { media_type: string; data: string } }[];
    expect(block!.type).toBe('image');
    // Within the token budget the harness assumes for images (base64 characters / 8).
    expect(block!.source.data.length / 8).toBeLessThanOrEqual(25_000);
    const meta = await sharp(Buffer.from(block!.source.data, 'base64')).metadata();
    expect(meta.width).toBeLessThanOrEqual(2000);
    expect(Math.abs(meta.width! / meta.height! - 3)).toBeLessThan(0.05);
    expect(`image/${meta.format}`).toBe(block!.source.media_type);
  });
});
