import { useEffect, useState } from 'preact/hooks';
import { setUnauthorizedHandler } from '../api.ts';
import { useRoute, type Route } from '../route.ts';
import { tokenStore } from '../token.ts';
import { ApprovalsPage } from './approvals-page.tsx';
import { GithubPage } from './github-page.tsx';
import { SchedulesPage } from './schedules-page.tsx';
import { SessionPage } from './session-page.tsx';
import { SessionsPage } from './sessions-page.tsx';
import { SignIn } from './sign-in.tsx';

type Theme = 'light' | 'dark';
/** The system's choice at first; a toggle overrides it for this tab only (nothing is stored). */
const systemTheme = (): Theme => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');

export function App() {
  const [signedIn, setSignedIn] = useState(() => tokenStore.get() !== null);
  const [theme, setTheme] = useState<Theme>(systemTheme);
  const route = useRoute();
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  useEffect(() => {
    setUnauthorizedHandler(() => {
      tokenStore.clear();
      setSignedIn(false);
    });
  }, []);
  const signOut = () => {
    tokenStore.clear();
    setSignedIn(false);
  };
  const toggle = (
    <button type="button" onClick={() => setTheme(theme === 'dark' ? 'light' : 'dark')} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
      {theme === 'dark' ? 'Light' : 'Dark'} theme
    </button>
  );
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} themeToggle={toggle} />;
  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: a skip link is a link to #main that works without script; the handler only moves focus there */}
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="bar">
        <span class="brand">Stratus</span>
        <nav aria-label="Main">
          <NavLink href="#/" label="Sessions" current={route.page === 'sessions' || route.page === 'session'} />
          <NavLink href="#/approvals" label="Approvals" current={route.page === 'approvals'} />
          <NavLink href="#/schedules" label="Schedules" current={route.page === 'schedules'} />
          <NavLink href="#/github" label="GitHub" current={route.page === 'github'} />
        </nav>
        <span class="spacer" />
        {toggle}
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} />
      </main>
    </>
  );
}

function NavLink(props: { href: string; label: string; current: boolean }) {
  return (
    <a href={props.href} aria-current={props.current ? 'page' : undefined}>
      {props.label}
    </a>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'session':
      return <SessionPage key={route.id} id={route.id} />;
    case 'approvals':
      return <ApprovalsPage />;
    case 'schedules':
      return <SchedulesPage />;
    case 'github':
      return <GithubPage />;
    default:
      return <SessionsPage />;
  }
}
