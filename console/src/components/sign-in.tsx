import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { errorText } from '../api.ts';
import { tokenStore } from '../token.ts';

/** Checks the token against the API (one listing call) before keeping it for this tab. */
export function SignIn(props: { onSignedIn: () => void; themeToggle: ComponentChildren }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await fetch('/v1/sessions?limit=1', { headers: { authorization: `Bearer ${token.trim()}` } });
      if (!res.ok) throw new Error(errorText(await res.json().catch(() => undefined), res));
      tokenStore.set(token.trim());
      props.onSignedIn();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in" id="main">
      <h1>Sign in to Stratus</h1>
      <form onSubmit={submit} class="panel">
        <label for="token">API token</label>
        <input
          id="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          aria-describedby="token-help"
        />
        <p id="token-help" class="muted">
          Kept in this tab's session storage only; closing the tab signs you out. Locally: <code>.stratus-data/api-token</code>.
        </p>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="row">
          <button type="submit" class="primary" disabled={busy || !token.trim()}>
            Sign in
          </button>
          {props.themeToggle}
        </div>
      </form>
    </main>
  );
}
