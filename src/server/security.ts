import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { secureHeaders } from "hono/secure-headers";

/*
 * The dashboard shows untrusted text (everything inside a trace) and may listen beyond loopback, so:
 * - every response carries a strict Content-Security-Policy (no inline script, no eval, nothing from elsewhere) and
 *   the usual hardening headers;
 * - with a token, every /api request must present it (Authorization: Bearer …), compared in constant time;
 * Hono provides the headers (hono/secure-headers) and the token check (hono/bearer-auth); the Host check and
 * Cache-Control are what it does not provide.
 * - without a token (loopback only), the Host header must name a loopback host, so a web page cannot reach the API
 *   through DNS rebinding.
 */

const CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
};

/** The policy as sent (no inline script, no eval, nothing from elsewhere). */
export const CONTENT_SECURITY_POLICY = Object.entries(CSP_DIRECTIVES)
  .map(([k, v]) => `${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)} ${v.join(" ")}`)
  .join("; ");

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

/**
 * Hono's secure-headers with the dashboard's policy. Cache-Control is ours: Hono sets no caching header, and API
 * answers hold trace text that must not linger in shared caches.
 */
export function securityHeaders(): MiddlewareHandler {
  const hono = secureHeaders({
    contentSecurityPolicy: CSP_DIRECTIVES,
    xFrameOptions: "DENY",
    referrerPolicy: "no-referrer",
    permissionsPolicy: { camera: [], microphone: [], geolocation: [], payment: [], usb: [] },
    // served over plain HTTP on this machine; HSTS is for a TLS proxy in front of it, if there is one
    strictTransportSecurity: false,
  });
  return async (c, next) => {
    await hono(c, next);
    if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
  };
}

/** RFC 6750 token characters: Hono's bearer-auth refuses any other presented token as a malformed header. */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~+/-]+=*$/;

/**
 * With a token: Hono's bearer-auth (constant-time comparison, RFC 6750 challenges). Without one (loopback only): the
 * Host header must name a loopback host, so a web page cannot reach the API through DNS rebinding — Hono has no Host
 * check (its ip-restriction looks at the client address, which a rebinding attack does not change).
 */
export function apiGuard(opts: { token?: string }): MiddlewareHandler {
  if (opts.token) {
    if (!TOKEN_PATTERN.test(opts.token)) throw new Error("the access token may hold only letters, digits and . _ ~ + / - (then = padding)");
    const message = { error: "this dashboard needs its access token (Authorization: Bearer <token>)" };
    return bearerAuth({ token: opts.token, realm: "faultline", noAuthenticationHeader: { message }, invalidToken: { message }, invalidAuthenticationHeader: { message } });
  }
  return async (c, next) => {
    const host = c.req.header("host");
    if (host !== undefined && !isLoopback(hostName(host))) return c.json({ error: `requests must address this server as localhost (got Host: ${host})` }, 403);
    await next();
  };
}
