import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ParityCase } from '../../../scripts/parity-case.ts';
import { err, ok, useToolStack } from './tool-harness.ts';

/** The two observed cases (scripts/parity-cases/notebook-edit*.json): every text below is what Claude Code 2.1.88 answered. */
const kase = (name: string) => JSON.parse(readFileSync(new URL(`../../../scripts/parity-cases/${name}`, import.meta.url), 'utf8')) as Required<ParityCase>;
const NEW_ID = /^[0-9a-z]{11}$/;

describe('NotebookEdit through the runner', () => {
  const h = useToolStack();

  it('replaces, inserts and deletes cells with the observed answers and refusals, and writes the notebook as one-space JSON', async () => {
    const c = kase('notebook-edit.json');
    const { results: r, bytes } = await h.runAndRead(c.files, c.steps, ['n.ipynb', 'old.ipynb']);
    expect(r.e0).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    expect(r.e1).toMatchObject(ok("Updated cell code1 with print('changed')"));
    const inserted = /^Inserted cell (\S+) with ## New$/.exec(r.e2!.content as string)?.[1];
    expect(inserted).toMatch(NEW_ID);
    expect(r.e3).toMatchObject(ok('Deleted cell code2'));
    expect(r.e4).toMatchObject(err('<tool_use_error>Cell with ID "nope" not found in notebook.</tool_use_error>'));
    const first = /^Inserted cell (\S+) with first$/.exec(r.e5!.content as string)?.[1];
    expect(first).toMatch(NEW_ID);
    expect(r.e6).toMatchObject(err('<tool_use_error>Cell type is required when using edit_mode=insert.</tool_use_error>'));
    expect(String(r.e7!.content)).toContain('"message": "Invalid option: expected one of \\"replace\\"|\\"insert\\"|\\"delete\\""');
    expect(r.e8).toMatchObject(
      err('<tool_use_error>File must be a Jupyter notebook (.ipynb file). For editing other file types, use the FileEdit tool.</tool_use_error>'),
    );
    // A relative path is taken from the working directory.
    expect(r.e9).toMatchObject(ok('Updated cell intro with x'));
    expect(r.e10).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    // A notebook without cell ids (nbformat 4.4): cells by position, and no id to name.
    expect(r.e11).toMatchObject(ok('Updated cell undefined with c'));
    expect(r.e12).toMatchObject(ok('Inserted cell undefined with z=2'));
    expect(r.e13).toMatchObject(err('<tool_use_error>Cell with index 9 does not exist in notebook.</tool_use_error>'));
    expect(r.e14).toMatchObject(ok('Deleted cell undefined'));
    expect(r.r3).toMatchObject(err("Expected property name or '}' in JSON at position 1"));
    expect(r.e15).toMatchObject(err('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>'));
    expect(r.e16).toMatchObject(ok('Updated cell code1 with y'));
    expect(r.e17).toMatchObject(
      err(
        '<tool_use_error>InputValidationError: NotebookEdit failed due to the following issue:\nThe required parameter `new_source` is missing</tool_use_error>',
      ),
    );
    expect(r.e18).toMatchObject(err('<tool_use_error>Cell ID must be specified when not inserting a new cell.</tool_use_error>'));

    // New cells: type, id (4.5 only), source, metadata, and for code an empty run; a replaced code cell lost its outputs and kept its keys' order.
    expect(bytes['n.ipynb']!.toString()).toBe(
      JSON.stringify(
        {
          cells: [
            { cell_type: 'code', id: first, source: 'first', metadata: {}, execution_count: null, outputs: [] },
            { cell_type: 'markdown', id: 'intro', metadata: {}, source: 'x' },
            { cell_type: 'markdown', id: inserted, source: '## New', metadata: {} },
            { cell_type: 'markdown', execution_count: null, id: 'code1', metadata: {}, outputs: [], source: 'y' },
          ],
          metadata: { kernelspec: { language: 'python', name: 'python3' }, language_info: { name: 'python' } },
          nbformat: 4,
          nbformat_minor: 5,
        },
        null,
        1,
      ),
    );
    expect(JSON.parse(bytes['old.ipynb']!.toString()).cells).toEqual([
      { cell_type: 'code', source: 'z=2', metadata: {}, execution_count: null, outputs: [] },
      { cell_type: 'markdown', metadata: {}, source: 'c' },
    ]);
  });

  it('addresses cell-N by position in a notebook with ids, naming the cell as addressed, and edits a notebook a command changed since it was read', async () => {
    const c = kase('notebook-edit-ids.json');
    const { results: r, bytes } = await h.runAndRead(c.files, c.steps, ['n.ipynb']);
    expect(r.f1).toMatchObject(ok('Updated cell cell-1 with by index'));
    expect(String(r.f2!.content)).toMatch(/^Inserted cell [0-9a-z]{11} with ins$/);
    expect(r.f3).toMatchObject(err('<tool_use_error>Cell ID must be specified when not inserting a new cell.</tool_use_error>'));
    expect(r.f4).toMatchObject(ok('Updated cell intro with after change'));
    expect(r.f5).toMatchObject(err('<tool_use_error>Cell with ID "cell-x" not found in notebook.</tool_use_error>'));
    const cells = JSON.parse(bytes['n.ipynb']!.toString()).cells as { id: string; source: string }[];
    expect(cells.map((cell) => cell.source)).toEqual(['after change', 'ins', 'by index', '1+1']);
  });
});
