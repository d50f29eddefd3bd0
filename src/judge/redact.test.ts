import { describe, expect, it } from "vitest";
import { buildTrace } from "../trace/index.js";
import { Redactor } from "./redact.js";

const KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789";
const PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\nabcdef==\n-----END RSA PRIVATE KEY-----";

describe("Redactor", () => {
  it("removes each default kind and counts it", () => {
    const counts: Record<string, number> = {};
    const out = new Redactor().text(
      [
        `export OPENAI_API_KEY=${KEY}`,
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig' https://api.example.com",
        "git clone https://alice:hunter2secret@git.example.com/repo.git",
        PEM,
        "contact bob.smith@example.org or carol@mail.example.co.uk",
        'db password: "s3cr3t-pass"',
        "AWS AKIAIOSFODNN7EXAMPLE",
      ].join("\n"),
      counts,
    );
    expect(out).not.toContain(KEY);
    expect(out).not.toContain("eyJhbGciOiJIUzI1NiJ9");
    expect(out).not.toContain("hunter2secret");
    expect(out).not.toContain("MIIEowIBAAKCAQEA7x");
    expect(out).not.toContain("bob.smith@example.org");
    expect(out).not.toContain("s3cr3t-pass");
    expect(out).not.toContain("AKIAIOSFODNN7EXAMPLE");
    // The non-secret parts stay readable.
    expect(out).toContain("Authorization: Bearer [REDACTED:bearer-token]");
    expect(out).toContain("https://alice:[REDACTED:url-password]@git.example.com/repo.git");
    expect(out).toContain(`db password: "[REDACTED:secret-assignment]"`);
    expect(counts).toEqual({ "private-key": 1, "bearer-token": 1, "url-password": 1, "api-key": 2, "secret-assignment": 1, email: 2 });
  });

  it("leaves ordinary text alone", () => {
    const counts: Record<string, number> = {};
    const text = "Ran pytest: 3 passed. See docs at https://docs.example.com/page and version 1.2.3.";
    expect(new Redactor().text(text, counts)).toBe(text);
    expect(counts).toEqual({});
  });

  it("takes configurable patterns and can switch built-in kinds off", () => {
    const r = new Redactor({ disable: ["email"], patterns: [{ kind: "ticket", pattern: "TICKET-\\d+" }] });
    const counts: Record<string, number> = {};
    expect(r.text("mail ops@example.com about TICKET-4411 and TICKET-9", counts)).toBe("mail ops@example.com about [REDACTED:ticket] and [REDACTED:ticket]");
    expect(counts).toEqual({ ticket: 2 });
    expect(new Redactor({ defaults: false }).text(KEY, {})).toBe(KEY);
  });

  it("rejects patterns that are invalid or match the empty string", () => {
    expect(() => new Redactor({ patterns: [{ kind: "bad", pattern: "(" }] })).toThrow(/"bad" is not a valid regular expression/);
    expect(() => new Redactor({ patterns: [{ kind: "empty", pattern: "x*" }] })).toThrow(/matches the empty string/);
  });

  it("redacts a trace's task, step text, tool arguments (nested) and outputs without touching the original", () => {
    const trace = buildTrace({ id: "r", source: { file: "mem", format: "test", index: 0 }, task: { text: "Email the report to boss@corp.example.com" } }, [
      { agent: "a", role: "assistant", kind: "tool_call", tool: { name: "http", args: { headers: { Authorization: `Bearer ${KEY}` }, to: ["x@y.example.com"] } } },
      { agent: "env", role: "tool", kind: "tool_result", tool: { name: "http", output: `token=${KEY}` } },
    ]);
    const r = new Redactor().trace(trace);
    const json = JSON.stringify(r.trace);
    expect(json).not.toContain(KEY);
    expect(json).not.toContain("boss@corp.example.com");
    expect(json).not.toContain("x@y.example.com");
    expect(r.counts).toEqual({ email: 2, "bearer-token": 1, "api-key": 1 });
    expect(r.total).toBe(4);
    expect(JSON.stringify(trace)).toContain(KEY);
  });
});
