import { useState } from 'preact/hooks';

/** The next turn's prompt (Ctrl/⌘+Enter sends), and Interrupt while a turn runs. */
export function PromptBox(props: { running: boolean; disabled: boolean; onSend: (prompt: string) => void; onInterrupt: () => void }) {
  const [prompt, setPrompt] = useState('');
  const send = (e?: Event) => {
    e?.preventDefault();
    if (!prompt.trim() || props.running || props.disabled) return;
    props.onSend(prompt);
    setPrompt('');
  };
  return (
    <form class="panel" onSubmit={send}>
      <label for="prompt">Prompt</label>
      <textarea
        id="prompt"
        rows={3}
        value={prompt}
        onInput={(e) => setPrompt(e.currentTarget.value)}
        onKeyDown={(e) => (e.ctrlKey || e.metaKey) && e.key === 'Enter' && send(e)}
        aria-describedby="prompt-help"
      />
      <p id="prompt-help" class="muted">
        {props.disabled ? 'Answer what waits for you first.' : 'Ctrl+Enter sends.'}
      </p>
      <div class="row">
        <button type="submit" class="primary" disabled={props.running || props.disabled || !prompt.trim()}>
          Send
        </button>
        {props.running && (
          <button type="button" class="danger" onClick={props.onInterrupt}>
            Interrupt
          </button>
        )}
      </div>
    </form>
  );
}
