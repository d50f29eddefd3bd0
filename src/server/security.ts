import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";

/*
 * The dashboard shows untrusted text (everything inside a trace) and may listen beyond loopback, so:
 * - every response carries a strict Content-Security-Policy (no inline script, no eval, nothing from elsewhere) and
 *   the usual hardening headers;
 * - with a token, every /api request must present it (Authorization: Bearer …), compared in constant time;
 * - without a token (loopback only), the Host header must name a loopback host, so a web page cannot reach the API
 *   through DNS rebinding.
 */

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

/** True for host names and addresses that only reach this machine. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_HOSTS.has(h) || /^127(\.\d{1,3}){3}$/.test(h) || h.endsWith(".localhost");
}

/** The host part of a Host header (`127.0.0.1:8080`, `[::1]:80`, `localhost`). */
export function hostName(header: string): string {
  if (header.startsWith("[")) return header.slice(0, header.indexOf("]") + 1);
  const i = header.lastIndexOf(":");
  return i >= 0 ? header.slice(0, i) : header;
}

export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const h = c.res.headers;
    h.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    h.set("X-Content-Type-Options", "nosniff");
    h.set("X-Frame-Options", "DENY");
    h.set("Referrer-Policy", "no-referrer");
    h.set("Cross-Origin-Opener-Policy", "same-origin");
    h.set("Cross-Origin-Resource-Policy", "same-origin");
    h.set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()");
    if (!h.has("Cache-Control")) h.set("Cache-Control", "no-store");
  };
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Constant-time comparison of a presented token with the expected one (hashing first evens out the lengths). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header. */
export function bearer(header: string | undefined): string | undefined {
  const m = header?.match(/^Bearer\s+(.+)$/i);
  return m?.[1]?.trim();
}

export function apiGuard(opts: { token?: string }): MiddlewareHandler {
  return async (c, next) => {
    if (opts.token) {
      if (!tokenMatches(bearer(c.req.header("authorization")), opts.token))
        return c.json({ error: "this dashboard needs its access token (Authorization: Bearer <token>)" }, 401, { "WWW-Authenticate": 'Bearer realm="faultline"' });
    } else {
      const host = c.req.header("host");
      if (host !== undefined && !isLoopback(hostName(host)))
        return c.json({ error: `requests must address this server as localhost (got Host: ${host})` }, 403);
    }
    await next();
  };
}
