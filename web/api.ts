/*
 * The JSON API client. When the server needs a token, `faultline serve` prints an address with `#token=…`: the
 * fragment is read once, kept in sessionStorage for this tab and removed from the address bar.
 */

const TOKEN_KEY = "faultline.token";

export class AuthRequired extends Error {}

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function captureToken(): void {
  const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (!m) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1] ?? ""));
  history.replaceState(history.state, "", location.pathname + location.search);
}

export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

/** GET an API path (with its query) and parse the JSON answer. */
export async function api<T>(path: string, params?: Record<string, string | number | undefined | null>): Promise<T> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== null && v !== "") qs.set(k, String(v));
  const url = `/api${path}${qs.size ? `?${qs}` : ""}`;
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(url, { headers, credentials: "omit", cache: "no-store" });
  if (res.status === 401) throw new AuthRequired("this dashboard needs its access token");
  const body = (await res.json().catch(() => null)) as (T & { error?: string }) | null;
  if (!res.ok || body === null) throw new ApiFailure(res.status, body?.error ?? `${res.status} ${res.statusText}`);
  return body;
}
