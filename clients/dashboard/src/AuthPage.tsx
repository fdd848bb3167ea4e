import { type FormEvent, useRef, useState } from 'react';
import { ApiError, api, errorText, setCsrf } from './api.js';

type Mode = 'login' | 'signup' | 'reset';

/**
 * The API's message for a wrong login points scripts to `POST /v1/accounts`; on this page the
 * way to an account is the link below the form.
 */
function loginErrorText(err: unknown): string {
  if (err instanceof ApiError && err.code === 'invalid_credentials') {
    return 'The email or the password is wrong: check both, or use "Create an account" below.';
  }
  return errorText(err);
}

export function AuthPage({ onLoggedIn }: { onLoggedIn: () => void }) {
  const [mode, setMode] = useState<Mode>('login');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const passwordInput = useRef<HTMLInputElement>(null);

  const login = async () => {
    const s = await api<{ csrf: string }>('POST', '/v1/sessions', { email, password });
    setCsrf(s.csrf);
    onLoggedIn();
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setNotice('');
    setBusy(true);
    try {
      if (mode === 'signup') {
        await api('POST', '/v1/accounts', { email, password });
        await login();
      } else if (mode === 'login') {
        await login();
      } else {
        await api('POST', '/v1/password-resets', { token, password });
        // Ready to log in: the email stays, the new password is typed again, the token is spent.
        setToken('');
        setPassword('');
        setNotice('Password changed: log in with the new one.');
        setMode('login');
        passwordInput.current?.focus();
      }
    } catch (err) {
      setError(mode === 'login' ? loginErrorText(err) : errorText(err));
    } finally {
      setBusy(false);
    }
  };

  // Another form: the last one's error and notice go; a password typed to log in is never
  // carried into Reset's "New password" (nor a new one back into the login).
  const switchTo = (next: Mode) => {
    setError('');
    setNotice('');
    if (next === 'reset' || mode === 'reset') setPassword('');
    setMode(next);
  };

  const title = { login: 'Log in', signup: 'Create an account', reset: 'Reset your password' }[
    mode
  ];
  return (
    <main className="auth">
      <h1>Herald</h1>
      <form onSubmit={submit} className="card" aria-labelledby="auth-title">
        <h2 id="auth-title">{title}</h2>
        {mode === 'reset' && (
          <p className="hint">
            Herald sends no email. Ask support for a reset token: they print a one-time token (valid
            one hour) with the admin tool after checking it is you.
          </p>
        )}
        {/* In every mode, so the address typed before a reset is there to log in after it. */}
        <label>
          Email
          <input
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
            autoComplete="email"
          />
        </label>
        {mode === 'reset' && (
          <label>
            Reset token
            <input
              value={token}
              onChange={(e) => setToken(e.target.value)}
              required
              autoComplete="off"
            />
          </label>
        )}
        <label>
          {mode === 'reset' ? 'New password' : 'Password'}
          <input
            ref={passwordInput}
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
            minLength={mode === 'login' ? 1 : 12}
            autoComplete={mode === 'login' ? 'current-password' : 'new-password'}
          />
        </label>
        {mode !== 'login' && <p className="hint">At least 12 characters.</p>}
        <button type="submit" disabled={busy}>
          {title}
        </button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {notice && <p role="status">{notice}</p>}
      </form>
      <p className="switch">
        {mode !== 'login' && (
          <button type="button" className="link" onClick={() => switchTo('login')}>
            I have an account: log in
          </button>
        )}
        {mode !== 'signup' && (
          <button type="button" className="link" onClick={() => switchTo('signup')}>
            Create an account
          </button>
        )}
        {mode !== 'reset' && (
          <button type="button" className="link" onClick={() => switchTo('reset')}>
            Forgot your password?
          </button>
        )}
      </p>
    </main>
  );
}
