import { gunzipSync, inflateSync } from "node:zlib";
import otlp from "@opentelemetry/otlp-transformer/build/src/generated/root.js";

/**
 * OTLP/HTTP request bodies → export requests in the OTLP/JSON shape the `otlp-traces` format reader takes. Protobuf
 * is decoded with the generated code of the official opentelemetry-proto definitions that
 * @opentelemetry/otlp-transformer 0.208.0 ships (its last Node 20 line that carries them; no hand-written parsing).
 */

/** The two generated message classes used here (the package types its generated root only as a protobufjs Root). */
interface GeneratedMessage {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
  fromObject(object: Record<string, unknown>): unknown;
  encode(message: unknown): { finish(): Uint8Array };
}
const generated = otlp as unknown as { opentelemetry: { proto: { collector: { trace: { v1: Record<"ExportTraceServiceRequest" | "ExportTraceServiceResponse", GeneratedMessage> } } } } };
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = generated.opentelemetry.proto.collector.trace.v1;

export class OtlpRequestError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

export type OtlpEncoding = "json" | "protobuf";

export interface DecodeLimits {
  /** Largest body accepted once decompressed, in bytes. */
  maxDecompressedBytes: number;
}

/** The encoding a Content-Type names, or a 415. */
export function encodingOf(contentType: string | undefined): OtlpEncoding {
  const t = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (t === "application/json") return "json";
  if (t === "application/x-protobuf" || t === "application/protobuf") return "protobuf";
  throw new OtlpRequestError(415, `unsupported content type "${contentType ?? ""}": OTLP/HTTP takes application/x-protobuf or application/json`);
}

/** Undoes Content-Encoding (gzip, deflate or none), refusing a body that inflates past the limit. */
export function decompress(body: Uint8Array, contentEncoding: string | undefined, limits: DecodeLimits): Uint8Array {
  const enc = (contentEncoding ?? "identity").trim().toLowerCase();
  try {
    if (enc === "gzip") return gunzipSync(body, { maxOutputLength: limits.maxDecompressedBytes });
    if (enc === "deflate") return inflateSync(body, { maxOutputLength: limits.maxDecompressedBytes });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ERR_BUFFER_TOO_LARGE" || /too large|maxOutputLength/i.test(err.message)) throw new OtlpRequestError(413, `the ${enc} body inflates past ${limits.maxDecompressedBytes} bytes`);
    throw new OtlpRequestError(400, `the body is not valid ${enc}: ${err.message}`);
  }
  if (enc !== "identity" && enc !== "") throw new OtlpRequestError(415, `unsupported content encoding "${contentEncoding}": gzip, deflate or none`);
  if (body.byteLength > limits.maxDecompressedBytes) throw new OtlpRequestError(413, `the body is larger than ${limits.maxDecompressedBytes} bytes`);
  return body;
}

const b64ToHex = (b: unknown) => (typeof b === "string" ? Buffer.from(b, "base64").toString("hex") : b);

/** An export request decoded, as OTLP/JSON: ids as hex, 64-bit numbers as decimal strings, enums as numbers. */
export function decodeRequest(bytes: Uint8Array, encoding: OtlpEncoding): Record<string, unknown> {
  if (encoding === "json") {
    let v: unknown;
    try {
      v = JSON.parse(Buffer.from(bytes).toString("utf8"));
    } catch (e) {
      throw new OtlpRequestError(400, `the body is not JSON: ${(e as Error).message}`);
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) throw new OtlpRequestError(400, "the body is not an OTLP ExportTraceServiceRequest object");
    return v as Record<string, unknown>;
  }
  let msg: ReturnType<typeof ExportTraceServiceRequest.decode>;
  try {
    msg = ExportTraceServiceRequest.decode(bytes);
  } catch (e) {
    throw new OtlpRequestError(400, `the body is not an OTLP ExportTraceServiceRequest protobuf: ${(e as Error).message}`);
  }
  const obj = ExportTraceServiceRequest.toObject(msg, { longs: String, enums: Number, bytes: String, defaults: false, arrays: true }) as Record<string, unknown>;
  // OTLP/JSON writes trace and span ids as hex, not base64 (bytesValue attributes stay base64, as in OTLP/JSON)
  for (const rs of (obj.resourceSpans as Record<string, unknown>[] | undefined) ?? [])
    for (const ss of (rs.scopeSpans as Record<string, unknown>[] | undefined) ?? [])
      for (const sp of (ss.spans as Record<string, unknown>[] | undefined) ?? []) {
        sp.traceId = b64ToHex(sp.traceId);
        sp.spanId = b64ToHex(sp.spanId);
        if (sp.parentSpanId !== undefined) sp.parentSpanId = b64ToHex(sp.parentSpanId);
        if (sp.parentSpanId === "") delete sp.parentSpanId;
        for (const l of (sp.links as Record<string, unknown>[] | undefined) ?? []) {
          l.traceId = b64ToHex(l.traceId);
          l.spanId = b64ToHex(l.spanId);
        }
      }
  return obj;
}

/** The ExportTraceServiceResponse body, in the request's encoding: empty, or a partial success naming what was refused. */
export function responseBody(encoding: OtlpEncoding, rejected: number, message: string): { body: Uint8Array | string; contentType: string } {
  const value = rejected > 0 ? { partialSuccess: { rejectedSpans: rejected, errorMessage: message } } : {};
  if (encoding === "json") return { body: JSON.stringify(rejected > 0 ? { partialSuccess: { rejectedSpans: String(rejected), errorMessage: message } } : {}), contentType: "application/json" };
  return { body: ExportTraceServiceResponse.encode(ExportTraceServiceResponse.fromObject(value)).finish(), contentType: "application/x-protobuf" };
}
