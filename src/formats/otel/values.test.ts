import { describe, expect, it } from "vitest";
import { attributesToRecord, decodeAnyValue, decodeJsonish, flattenNestedAttributes, nanosToIso, normalizeOtelId, statusCode, toNanos, unflatten } from "./values.js";

describe("decodeAnyValue / attributesToRecord", () => {
  it("decodes every OTLP AnyValue variant, camel and snake case", () => {
    const attrs = attributesToRecord([
      { key: "s", value: { stringValue: "x" } },
      { key: "i", value: { intValue: "42" } },
      { key: "big", value: { intValue: "1751473916637844000" } },
      { key: "d", value: { doubleValue: 0.5 } },
      { key: "b", value: { boolValue: false } },
      { key: "a", value: { arrayValue: { values: [{ stringValue: "stop" }, { intValue: "3" }] } } },
      { key: "kv", value: { kvlistValue: { values: [{ key: "k", value: { string_value: "v" } }] } } },
      { key: "snake_i", value: { int_value: 7 } },
      { key: "snake_a", value: { array_value: { values: [{ bool_value: true }] } } },
      { key: "empty", value: {} },
    ]);
    expect(attrs).toEqual({
      s: "x",
      i: 42,
      big: "1751473916637844000", // beyond 2^53: kept exact as a string
      d: 0.5,
      b: false,
      a: ["stop", 3],
      kv: { k: "v" },
      snake_i: 7,
      snake_a: [true],
      empty: {},
    });
  });
  it("passes flat attribute dicts through", () => {
    expect(attributesToRecord({ "gen_ai.request.model": "gpt-4o-mini", n: 3 })).toEqual({ "gen_ai.request.model": "gpt-4o-mini", n: 3 });
    expect(decodeAnyValue("plain")).toBe("plain");
  });
});

describe("normalizeOtelId", () => {
  it("keeps hex ids, lower-cased", () => {
    expect(normalizeOtelId("B3E700AF9EAB81E19F72F964D62A35AF", 16)).toBe("b3e700af9eab81e19f72f964d62a35af");
    expect(normalizeOtelId("39d6e9b3ddec9996", 8)).toBe("39d6e9b3ddec9996");
  });
  it("decodes base64 trace (24 chars) and span (12 chars) ids", () => {
    // the ids of otlp-openinference/quo_tav_agent.json, whose quotient.trace.id attribute gives the hex form
    expect(normalizeOtelId("PHL1gt1FhyAgcA3641rvnQ==", 16)).toBe("3c72f582dd45872020700dfae35aef9d");
    expect(normalizeOtelId("TWf61QGIn9I=", 8)).toBe(Buffer.from("TWf61QGIn9I=", "base64").toString("hex"));
    expect(normalizeOtelId("ziprJqtLsl8=", 8)).toHaveLength(16);
  });
  it("pads 0x ids whose leading zeros Python's hex() dropped", () => {
    expect(normalizeOtelId("0x7365973ca79f436", 8)).toBe("07365973ca79f436");
    expect(normalizeOtelId("0xd63467e46838d158e4e08a9fda12d85", 16)).toBe("0d63467e46838d158e4e08a9fda12d85");
  });
  it("keeps foreign ids and rejects empty ones", () => {
    expect(normalizeOtelId("6f1c9a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f", 16)).toBe("6f1c9a4e-1d2b-4c3d-8e9f-0a1b2c3d4e5f");
    expect(normalizeOtelId("", 8)).toBeUndefined();
    expect(normalizeOtelId(null, 8)).toBeUndefined();
    expect(normalizeOtelId(255, 8)).toBe("00000000000000ff");
  });
});

describe("times", () => {
  it("reads nanosecond strings exactly, hrtime pairs, numbers and ISO strings", () => {
    expect(toNanos("1751473879643884800")).toBe(1751473879643884800n);
    expect(toNanos([1770131992, 242000000])).toBe(1770131992242000000n);
    expect(toNanos(1761146658415691700)).toBeTypeOf("bigint");
    expect(toNanos("2025-09-19T12:23:30.651Z")).toBe(1758284610651000000n);
    expect(toNanos("2024-01-01T00:00:00.123456")).toBe(1704067200123456000n); // Python isoformat: no zone, micros
    expect(toNanos("soon")).toBeUndefined();
  });
  it("renders ISO-8601 and leaves zero times out", () => {
    expect(nanosToIso(1770131992242000000n)).toBe("2026-02-03T15:19:52.242Z");
    expect(nanosToIso(0n)).toBeUndefined();
    expect(nanosToIso(undefined)).toBeUndefined();
  });
});

describe("statusCode", () => {
  it("accepts integers, proto enum strings, Python enum names and TRAIL-style names", () => {
    expect([statusCode(2), statusCode("STATUS_CODE_ERROR"), statusCode("StatusCode.ERROR"), statusCode("Error"), statusCode("ERROR")]).toEqual([2, 2, 2, 2, 2]);
    expect([statusCode(1), statusCode("STATUS_CODE_OK"), statusCode("OK")]).toEqual([1, 1, 1]);
    expect([statusCode(0), statusCode(undefined), statusCode("UNSET")]).toEqual([0, 0, 0]);
  });
});

describe("unflatten", () => {
  it("rebuilds OpenInference indexed keys into ordered arrays", () => {
    const attrs = {
      "llm.output_messages.0.message.role": "assistant",
      "llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "b",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "a",
      "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"q":1}',
      "llm.input_messages.0.message.role": "user",
      "llm.output_messages.10.message.role": "assistant",
      "llm.output_messages.2.message.role": "tool",
    };
    const out = unflatten(attrs, "llm.output_messages") as { message: Record<string, unknown> }[];
    expect(out.map((m) => m.message.role)).toEqual(["assistant", "tool", "assistant"]); // 0, 2, 10
    expect(out[0]!.message.tool_calls).toEqual([{ tool_call: { function: { name: "a", arguments: '{"q":1}' } } }, { tool_call: { function: { name: "b" } } }]);
    expect(unflatten(attrs, "llm.absent")).toBeUndefined();
  });
});

describe("decodeJsonish", () => {
  it("parses JSON, also when encoded twice, and leaves text alone", () => {
    expect(decodeJsonish('"\\"what\'s your name\\""')).toBe("what's your name");
    expect(decodeJsonish('{"a":[1]}')).toEqual({ a: [1] });
    expect(decodeJsonish("[link](https://x) is text")).toBe("[link](https://x) is text");
    expect(decodeJsonish('"quoted" and more')).toBe('"quoted" and more');
  });
});

describe("flattenNestedAttributes", () => {
  it("flattens Phoenix-style nested attributes into dotted keys, and leaves flat dicts alone", () => {
    const nested = { openinference: { span: { kind: "LLM" } }, llm: { model_name: "gpt-4o", input_messages: [{ message: { role: "user", content: "hi" } }] }, tag: { tags: ["a", "b"] } };
    expect(flattenNestedAttributes(nested)).toEqual({
      "openinference.span.kind": "LLM",
      "llm.model_name": "gpt-4o",
      "llm.input_messages.0.message.role": "user",
      "llm.input_messages.0.message.content": "hi",
      "tag.tags": ["a", "b"],
    });
    const flat = { "llm.model_name": "m", "metadata": { a: 1 } };
    expect(flattenNestedAttributes(flat)).toBe(flat);
  });
});
