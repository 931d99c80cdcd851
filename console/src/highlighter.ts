import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import dockerfile from 'highlight.js/lib/languages/dockerfile';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

/**
 * Syntax highlighting for the file viewer. This module is only ever imported dynamically, so
 * highlight.js and its grammars are a chunk of their own, fetched when a file is first opened:
 * the console's first load does not carry them.
 */
const LANGUAGES = { bash, css, diff, dockerfile, go, ini, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);

const BY_EXTENSION: Record<string, keyof typeof LANGUAGES> = {
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  css: 'css',
  diff: 'diff',
  patch: 'diff',
  go: 'go',
  ini: 'ini',
  toml: 'ini',
  cfg: 'ini',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  json: 'json',
  md: 'markdown',
  markdown: 'markdown',
  py: 'python',
  rs: 'rust',
  sql: 'sql',
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  html: 'xml',
  htm: 'xml',
  xml: 'xml',
  svg: 'xml',
  yml: 'yaml',
  yaml: 'yaml',
};

/** Above this, highlighting a file takes long enough to stall the page; it is shown plain. */
export const MAX_HIGHLIGHT_CHARS = 200_000;

/** The language of a path, by its name or extension; undefined when none of the registered ones fits. */
export function languageOf(path: string): string | undefined {
  const name = path.split('/').at(-1) ?? '';
  if (name === 'Dockerfile') return 'dockerfile';
  const ext = name.includes('.') ? name.split('.').at(-1)!.toLowerCase() : '';
  return BY_EXTENSION[ext];
}

/**
 * The text as highlight.js HTML (every character of the text escaped, spans with `hljs-*`
 * classes only), or undefined when the file is not a known language or too large.
 */
export function highlight(path: string, text: string): { language: string; html: string } | undefined {
  const language = languageOf(path);
  if (!language || text.length > MAX_HIGHLIGHT_CHARS) return undefined;
  return { language, html: hljs.highlight(text, { language, ignoreIllegals: true }).value };
}
