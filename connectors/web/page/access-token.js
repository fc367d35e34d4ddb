// The playground's access token, as this tab holds it. The address the playground prints
// carries it in the fragment (`#token=…`), which the browser never sends to any server. It is
// read once, taken out of the address bar (so it is not in a screenshot, a copied link or the
// history), and kept in sessionStorage: scoped to this origin, port included, and to this tab,
// so a reload keeps it and no other server on 127.0.0.1 can read it. It goes out only as
// `Authorization: Bearer …` on this page's own requests: never as a cookie, which the browser
// would also send to every other port of 127.0.0.1.
/* global window, location, history, sessionStorage */

const KEY = 'playground-token';

/** The token: from the address (then removed from it), else the one this tab kept; '' when there is none. */
export function takeToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get('token');
  if (given) {
    fragment.delete('token');
    const rest = fragment.toString();
    history.replaceState(null, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
    store(given);
    return given;
  }
  try {
    return sessionStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * A new address pasted into this tab differs from the page's only in its fragment, so the
 * browser does not load the page again: keep the new token and load it again ourselves.
 */
export function reloadOnNewToken() {
  window.addEventListener('hashchange', () => {
    if (!new URLSearchParams(location.hash.slice(1)).has('token')) return;
    takeToken();
    location.reload();
  });
}

/** The playground refused the token (it was restarted with a new one): this tab no longer keeps it. */
export function forgetToken() {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // Storage disabled: nothing was kept.
  }
}

/** @param {string} token */
function store(token) {
  try {
    sessionStorage.setItem(KEY, token);
  } catch {
    // Storage disabled: the token lives in this page's memory only, and a reload needs the printed address again.
  }
}

/**
 * Headers with the token.
 * @param {string} token
 * @param {Record<string, string>} [headers]
 * @returns {Record<string, string>}
 */
export function withToken(token, headers = {}) {
  return { ...headers, authorization: `Bearer ${token}` };
}
