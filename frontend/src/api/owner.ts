// Credentials the page keeps (backend/server/auth.py, docs/deployment.md): the owner key that
// makes the graphs this browser saves its own (localStorage, made once), and the teacher's token
// when the page was opened from the teacher URL (`?token=`, kept for the tab and taken out of
// the address bar so that it is not shared by accident). On a loopback server neither matters.

const OWNER = "wiregrad.owner";
const TOKEN = "wiregrad.token";

function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24)); // 192 bits
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

function stored(storage: Storage | undefined, name: string): string | null {
  try {
    return storage?.getItem(name) ?? null;
  } catch {
    return null; // storage disabled
  }
}

/** The page's own copies, for its life: the owner key where storage is disabled, and the
 * teacher's token taken from this page's address. */
const page: { ownerKey: string | null; token: string | null } = { ownerKey: null, token: null };

/** This browser's owner key (made on first use). */
export function ownerKey(): string {
  const kept = stored(globalThis.localStorage, OWNER) ?? page.ownerKey;
  if (kept) return kept;
  const key = (page.ownerKey = randomKey());
  try {
    localStorage.setItem(OWNER, key);
  } catch {
    /* kept in memory */
  }
  return key;
}

/** Take `?token=` out of the address and keep it for this tab. */
export function captureToken(loc: Location = location, hist: History = history) {
  const query = new URLSearchParams(loc.search);
  const token = query.get("token");
  if (!token) return;
  try {
    sessionStorage.setItem(TOKEN, token);
  } catch {
    /* not kept: this page only */
  }
  query.delete("token");
  const rest = query.toString();
  hist.replaceState(null, "", loc.pathname + (rest ? `?${rest}` : "") + loc.hash);
  page.token = token;
}

export function teacherToken(): string | null {
  return page.token ?? stored(globalThis.sessionStorage, TOKEN);
}

/** The headers every API call carries. */
export function authHeaders(): Record<string, string> {
  const headers: Record<string, string> = { "X-Wiregrad-Owner": ownerKey() };
  const token = teacherToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  return headers;
}

/** The read-only link to a stored graph that anyone can open and fork. */
export function shareLink(graphId: string, share: string): string {
  return `${location.origin}/?graph=${encodeURIComponent(graphId)}&share=${encodeURIComponent(share)}`;
}
