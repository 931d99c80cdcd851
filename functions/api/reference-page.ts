/**
 * The API reference page at /docs, rendered on the server from the OpenAPI document: plain HTML
 * and one stylesheet from this origin, no script at all. The page shares the console's origin,
 * where the console keeps its token in session storage; with nothing to execute (and a CSP that
 * allows no script), nothing on this page can read it.
 */

type Json = Record<string, unknown>;
interface Document {
  info: { title: string; version: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, Json> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Nesting shown inline; deeper schemas are named components (links) or elided. */
const MAX_DEPTH = 4;

/** Where the stylesheet is served, beside the page. */
export const REFERENCE_STYLE_PATH = '/docs/reference.css';

/** `openApi` is the document `@hono/zod-openapi` generates; the page reads it as plain JSON. */
export function renderReferencePage(openApi: Pick<Document, 'info'> & object, documentPath: string): string {
  const doc = openApi as Document;
  const operations = operationsByTag(doc);
  const nav = [...operations.keys()].map((tag) => `<li><a href="#tag-${slug(tag)}">${esc(tag)}</a></li>`).join('');
  const sections = [...operations].map(([tag, ops]) => {
    const about = doc.tags?.find((t) => t.name === tag)?.description;
    return `<section id="tag-${slug(tag)}"><h2>${esc(tag)}</h2>${about ? prose(about) : ''}${ops.map(operation).join('')}</section>`;
  });
  const schemas = Object.entries(doc.components?.schemas ?? {}).map(
    ([name, schema]) =>
      `<details class="schema" id="schema-${slug(name)}"><summary><code>${esc(name)}</code></summary>${schema.description ? prose(String(schema.description)) : ''}${schemaBody(schema, 0)}</details>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)}</title><link rel="stylesheet" href="${REFERENCE_STYLE_PATH}"></head>
<body><header><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>The OpenAPI 3.1 document: <a href="${esc(documentPath)}"><code>${esc(documentPath)}</code></a>.</p>${prose(doc.info.description ?? '')}
<nav><ul>${nav}<li><a href="#schemas">Schemas</a></li></ul></nav></header>
<main>${sections.join('')}<section id="schemas"><h2>Schemas</h2>${schemas.join('')}</section></main></body></html>`;
}

interface Operation {
  method: string;
  path: string;
  op: Json;
}

function operationsByTag(doc: Document): Map<string, Operation[]> {
  const byTag = new Map<string, Operation[]>((doc.tags ?? []).map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = (op.tags as string[] | undefined)?.[0] ?? 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push({ method, path, op });
    }
  }
  for (const [tag, ops] of byTag) if (ops.length === 0) byTag.delete(tag);
  return byTag;
}

function operation({ method, path, op }: Operation): string {
  const id = `op-${method}-${slug(path)}`;
  const deprecated = op.deprecated ? ' <em>deprecated</em>' : '';
  const auth = Array.isArray(op.security) && op.security.length === 0 ? ' <em>no token</em>' : '';
  return `<details class="operation" id="${id}"><summary><span class="method ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code> ${esc(String(op.summary ?? ''))}${deprecated}${auth}</summary>
${op.description ? prose(String(op.description)) : ''}${parameters(op.parameters as Json[] | undefined)}${requestBody(op.requestBody as Json | undefined)}${responses(op.responses as Record<string, Json> | undefined)}</details>`;
}

function parameters(params: Json[] | undefined): string {
  if (!params?.length) return '';
  const rows = params.map((p) => {
    const deprecated = p.deprecated ? ' <em>deprecated</em>' : '';
    return `<tr><td><code>${esc(String(p.name))}</code>${p.required ? ' <b>required</b>' : ''}${deprecated}</td><td>${esc(String(p.in))}</td><td>${typeOf(p.schema as Json | undefined)}</td><td>${inline(String(p.description ?? (p.schema as Json | undefined)?.description ?? ''))}</td></tr>`;
  });
  return `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function requestBody(body: Json | undefined): string {
  if (!body) return '';
  return `<h4>Request body${body.required ? ' <b>required</b>' : ''}</h4>${content(body.content as Record<string, Json> | undefined)}`;
}

function responses(all: Record<string, Json> | undefined): string {
  if (!all) return '';
  const items = Object.entries(all).map(
    ([status, res]) =>
      `<li><b class="status s${status[0]}">${esc(status)}</b> ${inline(String(res.description ?? ''))}${content(res.content as Record<string, Json> | undefined)}</li>`,
  );
  return `<h4>Responses</h4><ul class="responses">${items.join('')}</ul>`;
}

function content(media: Record<string, Json> | undefined): string {
  if (!media) return '';
  return Object.entries(media)
    .map(([type, m]) => `<div class="media"><code>${esc(type)}</code>${m.schema ? schemaBody(m.schema as Json, 0) : ''}</div>`)
    .join('');
}

/** A schema as a short type name: a link for a component, otherwise its type. */
function typeOf(schema: Json | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').at(-1)!;
    return `<a href="#schema-${slug(name)}"><code>${esc(name)}</code></a>`;
  }
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(' | ');
  if (schema.const !== undefined) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) return union.map(typeOf).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any');
  if (type === 'array') return `array of ${typeOf(schema.items as Json | undefined) || 'any'}`;
  const format = schema.format ? ` (${esc(String(schema.format))})` : '';
  return `<code>${esc(type)}</code>${format}`;
}

/** A schema's type and, for objects and unions, what they hold. */
function schemaBody(schema: Json, depth: number): string {
  const head = `<span class="type">${typeOf(schema)}</span>`;
  if (depth >= MAX_DEPTH || typeof schema.$ref === 'string') return head;
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union) return `<div>One of:</div><ul class="union">${union.map((s) => `<li>${schemaBody(s, depth + 1)}</li>`).join('')}</ul>`;
  if (schema.type === 'array' && schema.items && !(schema.items as Json).$ref) return `${head}${schemaBody(schema.items as Json, depth + 1)}`;
  const props = schema.properties as Record<string, Json> | undefined;
  if (!props || Object.keys(props).length === 0) return head;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(props).map(([name, prop]) => {
    const nested = prop.properties || prop.anyOf || prop.oneOf || (prop.items as Json | undefined)?.properties ? schemaBody(prop, depth + 1) : typeOf(prop);
    return `<li><code>${esc(name)}</code>${required.has(name) ? ' <b>required</b>' : ''} ${nested}${prop.description ? ` — ${inline(String(prop.description))}` : ''}</li>`;
  });
  return `${head}<ul class="props">${rows.join('')}</ul>`;
}

/** Paragraphs of the descriptions' small Markdown: `code` and **bold**. */
function prose(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${inline(p)}</p>`)
    .join('');
}

function inline(text: string): string {
  return esc(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<b>$1</b>')
    .replace(/\n/g, '<br>');
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function slug(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export const REFERENCE_STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --code: #f3f4f6; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --code: #262c36; --accent: #4493f8; } }
body { font: 15px/1.5 system-ui, sans-serif; color: var(--fg); margin: 0 auto; max-width: 70rem; padding: 1rem 1.5rem 4rem; }
a { color: var(--accent); }
code { font: 13px ui-monospace, monospace; background: var(--code); padding: 0 .25em; border-radius: 4px; }
h1 small { color: var(--muted); font-weight: normal; font-size: .6em; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; }
h2 { border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 2.5rem; }
details { border: 1px solid var(--line); border-radius: 6px; margin: .5rem 0; padding: .4rem .75rem; }
details[open] > summary { margin-bottom: .5rem; }
summary { cursor: pointer; }
.method { display: inline-block; min-width: 4.2em; font: bold 12px ui-monospace, monospace; text-align: center; border-radius: 4px; padding: .1em .3em; color: #fff; background: #6e7781; }
.method.get { background: #1f6feb; } .method.post { background: #1a7f37; } .method.put, .method.patch { background: #9a6700; } .method.delete { background: #cf222e; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { border: 1px solid var(--line); padding: .25rem .5rem; text-align: left; vertical-align: top; }
ul.props, ul.union, ul.responses { margin: .25rem 0; }
.status.s2 { color: #1a7f37; } .status.s4 { color: #9a6700; } .status.s5 { color: #cf222e; }
.media { margin: .25rem 0 .5rem; }
em { color: var(--muted); }
`;
