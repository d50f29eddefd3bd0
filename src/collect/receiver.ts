import { createHash, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { decodeRequest, decompress, encodingOf, OtlpRequestError, responseBody, type OtlpEncoding } from "./decode.js";

/** One span as stored: its ids, whether it is a root span, and itself as a one-span OTLP/JSON export request. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  root: boolean;
  request: string;
}

export interface ReceiverOptions {
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Largest request body as sent (compressed), in bytes. Default 4 MiB. */
  maxBodyBytes?: number;
  /** Largest request body once decompressed, in bytes. Default 32 MiB. */
  maxDecompressedBytes?: number;
  /** Stores the spans; returns how many were refused (e.g. their trace was already handed to the workers) and why. */
  store(spans: ReceivedSpan[]): Promise<{ refused: number; reason?: string }>;
}

const isHexId = (v: unknown, bytes: number) => typeof v === "string" && v.length === bytes * 2 && /^[0-9a-f]+$/i.test(v) && !/^0+$/.test(v);

/** The spans of a decoded request, each as its own request; spans without valid ids are counted as refused. */
export function splitSpans(req: Record<string, unknown>): { spans: ReceivedSpan[]; invalid: number } {
  const spans: ReceivedSpan[] = [];
  let invalid = 0;
  for (const rs of (req.resourceSpans as Record<string, unknown>[] | undefined) ?? [])
    for (const ss of (rs.scopeSpans as Record<string, unknown>[] | undefined) ?? [])
      for (const sp of (ss.spans as Record<string, unknown>[] | undefined) ?? []) {
        if (!isHexId(sp.traceId, 16) || !isHexId(sp.spanId, 8)) {
          invalid++;
          continue;
        }
        const one = { resourceSpans: [{ resource: rs.resource, schemaUrl: rs.schemaUrl, scopeSpans: [{ scope: ss.scope, schemaUrl: ss.schemaUrl, spans: [sp] }] }] };
        spans.push({
          traceId: String(sp.traceId).toLowerCase(),
          spanId: String(sp.spanId).toLowerCase(),
          root: sp.parentSpanId === undefined || sp.parentSpanId === "" || /^0+$/.test(String(sp.parentSpanId)),
          request: JSON.stringify(one),
        });
      }
  return { spans, invalid };
}

/**
 * The OTLP/HTTP trace receiver: `POST /v1/traces` with OTLP/protobuf or OTLP/JSON, optionally gzip- or
 * deflate-compressed. Answers with an ExportTraceServiceResponse in the request's encoding: empty when every span was
 * stored; a partial success (`rejectedSpans`, `errorMessage`) naming what was refused — with 200 when some spans were
 * stored, with 400 when none could be, and with 401 / 413 / 415 for a request refused whole.
 */
export function createReceiver(opts: ReceiverOptions): Hono {
  const app = new Hono();
  const maxBody = opts.maxBodyBytes ?? 4 * 1024 * 1024;
  const limits = { maxDecompressedBytes: opts.maxDecompressedBytes ?? 32 * 1024 * 1024 };
  const refuse = (encoding: OtlpEncoding, status: 400 | 401 | 413 | 415, message: string, rejected = 0) => {
    const r = responseBody(encoding, rejected, message);
    // a refusal always names itself, also when no span count is known
    const body = rejected > 0 ? r.body : responseBody(encoding, 1, message).body;
    return new Response(body, { status, headers: { "content-type": r.contentType, ...(status === 401 ? { "www-authenticate": 'Bearer realm="faultline-collect"' } : {}) } });
  };
  const encodingOr = (ct: string | undefined): OtlpEncoding => {
    try {
      return encodingOf(ct);
    } catch {
      return "json";
    }
  };

  app.get("/health", (c) => c.json({ ok: true }));
  app.post(
    "/v1/traces",
    async (c, next) => {
      if (opts.token && !tokenMatches(bearer(c.req.header("authorization")), opts.token))
        return refuse(encodingOr(c.req.header("content-type")), 401, "this collector needs its token (Authorization: Bearer <token>)");
      await next();
    },
    bodyLimit({ maxSize: maxBody, onError: (c) => refuse(encodingOr(c.req.header("content-type")), 413, `the request body is larger than ${maxBody} bytes`) }),
    async (c) => {
      let encoding: OtlpEncoding = encodingOr(c.req.header("content-type"));
      try {
        encoding = encodingOf(c.req.header("content-type"));
        const raw = new Uint8Array(await c.req.arrayBuffer());
        const req = decodeRequest(decompress(raw, c.req.header("content-encoding"), limits), encoding);
        const { spans, invalid } = splitSpans(req);
        const stored = spans.length ? await opts.store(spans) : { refused: 0 };
        const rejected = invalid + stored.refused;
        const reasons = [invalid ? `${invalid} span(s) without a valid traceId/spanId` : "", stored.refused ? `${stored.refused} span(s): ${stored.reason ?? "refused"}` : ""].filter(Boolean).join("; ");
        if (rejected > 0 && rejected === invalid + spans.length) return refuse(encoding, 400, reasons, rejected);
        const r = responseBody(encoding, rejected, reasons);
        return new Response(r.body, { status: 200, headers: { "content-type": r.contentType } });
      } catch (e) {
        if (e instanceof OtlpRequestError) return refuse(encoding, e.status, e.message);
        throw e;
      }
    },
  );
  app.all("*", (c) => c.json({ error: `no route ${c.req.method} ${c.req.path}: OTLP/HTTP traces go to POST /v1/traces` }, 404));
  return app;
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * Constant-time comparison of a presented token with the expected one (hashing first evens out the lengths). The
 * collector checks its token itself, not with Hono's bearer-auth as the dashboard does: a refusal must be an OTLP
 * response (protobuf or JSON, as the request was), which the exporter understands.
 */
function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header. */
function bearer(header: string | undefined): string | undefined {
  const m = header?.match(/^Bearer\s+(.+)$/i);
  return m?.[1]?.trim();
}
