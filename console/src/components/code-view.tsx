import { useEffect, useState } from 'preact/hooks';

type Highlighted = { language: string; html: string } | undefined;

/**
 * A file's text, highlighted once the highlighter chunk has loaded (plain until then, and for
 * files in no known language). The HTML comes from highlight.js, which escapes the text.
 */
export function CodeView({ path, text }: { path: string; text: string }) {
  const [result, setResult] = useState<{ for: string; value: Highlighted } | null>(null);
  useEffect(() => {
    let current = true;
    void import('../highlighter.ts').then((m) => current && setResult({ for: text, value: m.highlight(path, text) }));
    return () => void (current = false);
  }, [path, text]);
  const highlighted = result?.for === text ? result.value : undefined;
  // Focusable: a long file scrolls inside the box, which keyboard users must be able to reach.
  if (!highlighted) return <pre tabIndex={0}>{text}</pre>;
  return (
    <pre tabIndex={0} class="hljs" data-language={highlighted.language}>
      <code dangerouslySetInnerHTML={{ __html: highlighted.html }} />
    </pre>
  );
}
