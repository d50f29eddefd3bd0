import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildTrace, type Finding, type Trace } from "../trace/index.js";
import { OpenAIChatModel } from "./client.js";
import { judgeTrace, type JudgeOptions, type JudgeSignals } from "./judge.js";
import { absentResponder, promptText, startMockOpenAI, type MockServer } from "./testing/mock-openai-server.js";

/**
 * End to end: secrets planted in every field the judge sends must not reach the (mock) provider. Each request body the
 * local OpenAI-compatible server receives is searched for every planted secret, in the structured (one call and
 * windowed) and MAST-compatible modes, and the redaction counts must account for every planted copy.
 */

let server: MockServer;
beforeAll(async () => {
  server = await startMockOpenAI();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.splice(0);
  server.setResponder(absentResponder);
});

const model = () => new OpenAIChatModel({ baseURL: server.baseURL, model: "judge-model", backoff: { initialMs: 5, maxMs: 20 }, maxAttempts: 1, timeoutMs: 5000 }, { env: {} });
const judgeOf = (d: { signals: Record<string, unknown> }) => d.signals.judge as JudgeSignals;

/** Everything the mock provider received, as text: every message, the whole body, the headers. */
function sentText(): string {
  return server.requests.map((r) => [promptText(r.body), JSON.stringify(r.body), JSON.stringify(r.headers)].join("\n")).join("\n");
}

interface Plant {
  name: string;
  /** The kind the planted text must be counted under, once per field. */
  kind: string;
  /** The planted text (it may end a field: a truncated key runs to the end of its field). */
  text: string;
  /** Substrings that must not be sent. */
  secrets: string[];
  /** The same secret as structured tool arguments; default `{ input: text }`. */
  object?: Record<string, unknown>;
}

const PEM_BODY = ["MIIEpAIBAAKCAQEA0truncatedKeyBody0123456789abcdefABCDEF", "QWxhZGRpbjpvcGVuIHNlc2FtZQ+/abcdefghijklmnopqrstuvwx"];
const JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

const PLANTS: Plant[] = [
  { name: "lowercase bearer header", kind: "bearer-token", text: "authorization: bearer Zx9abcDEFghiJKL0123mno", secrets: ["Zx9abcDEFghiJKL0123mno"], object: { headers: { authorization: "bearer Zx9abcDEFghiJKL0123mno" } } },
  { name: "Basic header", kind: "basic-auth", text: "Authorization: Basic dXNlcjpodW50ZXIy", secrets: ["dXNlcjpodW50ZXIy"], object: { headers: { Authorization: "Basic dXNlcjpodW50ZXIy" } } },
  { name: "cookie header", kind: "auth-header", text: "Cookie: sessionid=ck-abc123xyz; theme=dark", secrets: ["ck-abc123xyz"], object: { headers: { Cookie: "sessionid=ck-abc123xyz; theme=dark" } } },
  { name: "AWS secret env", kind: "secret-assignment", text: "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", secrets: ["wJalrXUtnFEMI"], object: { env: { AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" } } },
  { name: "DB password env", kind: "secret-assignment", text: "DB_PASSWORD=Tr0ub4dor-and-3", secrets: ["Tr0ub4dor"], object: { DB_PASSWORD: "Tr0ub4dor-and-3" } },
  { name: "JSON password", kind: "secret-assignment", text: '{"password": "correct horse battery staple"}', secrets: ["correct horse", "battery staple"], object: { password: "correct horse battery staple" } },
  {
    name: "double-encoded JSON secret",
    kind: "secret-assignment",
    text: String.raw`{"arguments": "{\"client_secret\": \"dbl-enc-s3cret-value\"}"}`,
    secrets: ["dbl-enc-s3cret-value"],
    object: { arguments: '{"client_secret": "dbl-enc-s3cret-value"}' },
  },
  { name: "API key header", kind: "secret-assignment", text: "X-Api-Key: xak-0a1b2c3d4e5f", secrets: ["xak-0a1b2c3d4e5f"], object: { headers: { "X-Api-Key": "xak-0a1b2c3d4e5f" } } },
  { name: "password in a query string", kind: "secret-assignment", text: "https://api.example.com/login?user=bob&password=qs-hunter2", secrets: ["qs-hunter2"] },
  { name: "password in a URL", kind: "url-password", text: "postgres://admin:pg-S3cret-pw@db.internal:5432/app", secrets: ["pg-S3cret-pw"] },
  { name: "PEM key", kind: "private-key", text: `-----BEGIN PRIVATE KEY-----\n${PEM_BODY.join("\n")}\n-----END PRIVATE KEY-----`, secrets: PEM_BODY },
  { name: "truncated PEM key", kind: "private-key", text: `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY.join("\n")}`, secrets: PEM_BODY },
  { name: "e-mail in a file name", kind: "email", text: "runs/bob.jones@example.com.json", secrets: ["bob.jones", "jones@example"] },
  { name: "GitHub token", kind: "api-key", text: "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", secrets: ["A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"] },
  { name: "GitHub fine-grained token", kind: "api-key", text: "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF", secrets: ["11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"] },
  { name: "Slack token", kind: "api-key", text: "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv", secrets: ["0987654321-AbCdEfGhIjKlMnOpQrStUv"] },
  { name: "Stripe key", kind: "api-key", text: "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", secrets: ["4eC39HqLyjWDarjtT1zdp7dc"] },
  { name: "Google API key", kind: "api-key", text: "AIza" + "SyD-abcdefghijklmnopqrstuvwxyz12345", secrets: ["SyD-abcdefghijklmnopqrstuvwxyz12345"] },
  { name: "AWS access key id", kind: "api-key", text: "AKIA" + "IOSFODNN7EXAMPLE", secrets: ["IOSFODNN7EXAMPLE"] },
  { name: "OpenAI key", kind: "api-key", text: "sk-proj-" + "AbCdEfGhIjKlMnOpQrStUvWx0123456789", secrets: ["AbCdEfGhIjKlMnOpQrStUvWx0123456789"] },
  { name: "JWT", kind: "jwt", text: JWT, secrets: [JWT.split(".")[1]!, JWT.split(".")[2]!] },
];

/** Fields that hold one planted copy each (the trace's agent list repeats the planted agent name). */
const FIELDS = [
  "trace id", "task", "agent list", "step agent", "system text", "user text", "assistant text", "tool name", "tool args (object)",
  "tool args (JSON string)", "tool output", "step tag", "hint evidence", "hint rationale", "hint detector",
] as const;

function plantedTrace(p: Plant): { trace: Trace; hints: Finding[] } {
  const t = p.text;
  const trace = buildTrace(
    { id: `run-${t}`, source: { file: "mem.jsonl", format: "test", index: 0 }, task: { text: t }, outcome: { success: false } },
    [
      { agent: "system", role: "system", kind: "message", text: t },
      { agent: "user", role: "user", kind: "message", text: t },
      { agent: `coder ${t}`, role: "assistant", kind: "message", text: `Using ${t}` },
      { agent: "coder", role: "assistant", kind: "tool_call", tool: { name: `tool ${t}`, callId: "c1", args: p.object ?? { input: t } } },
      { agent: "coder", role: "assistant", kind: "tool_call", tool: { name: "http", callId: "c2", args: t } },
      { agent: "env", role: "tool", kind: "tool_result", tags: [`tag ${t}`], tool: { name: "http", callId: "c2", output: t } },
    ],
  );
  const hints: Finding[] = [{ mode: "2.6", confidence: 0.7, steps: [2], evidence: t, rationale: `saw ${t}`, detector: `rules/${t}` }];
  return { trace, hints };
}

const MODES: [string, Partial<JudgeOptions>][] = [
  ["structured, one call", {}],
  ["structured, windowed", { windowTokens: 160, overlapTokens: 20 }],
  ["MAST-compatible", { mode: "mast-compatible" }],
];

describe("nothing planted reaches the provider", () => {
  it("the planted traces really contain the secrets (the check below is not vacuous)", () => {
    for (const p of PLANTS) {
      const { trace, hints } = plantedTrace(p);
      const raw = JSON.stringify({ trace, hints });
      for (const s of p.secrets) expect(raw, p.name).toContain(s);
    }
  });

  for (const [modeName, extra] of MODES)
    it(`one secret of every kind in every field the judge sends (${modeName})`, async () => {
      const leaks: string[] = [];
      const miscounted: string[] = [];
      for (const p of PLANTS) {
        server.requests.splice(0);
        const { trace, hints } = plantedTrace(p);
        const j = await judgeTrace(trace, hints, { model: model(), ...extra });
        expect(j.failed, `${p.name}: ${j.diagnosis.error}`).toBe(false);
        expect(server.requests.length).toBeGreaterThan(0);
        if (modeName.includes("windowed")) expect(judgeOf(j.diagnosis).windows, p.name).toBeGreaterThan(1);
        const sent = sentText();
        for (const s of p.secrets) if (sent.includes(s)) leaks.push(`${p.name}: ${JSON.stringify(s)}`);
        expect(sent).toContain(`[REDACTED:${p.kind}]`);
        // Counts add up: one redaction of the planted kind per field, nothing else, and the total is their sum.
        const r = judgeOf(j.diagnosis).redactions;
        if (JSON.stringify(r.byKind) !== JSON.stringify({ [p.kind]: FIELDS.length }) || r.total !== FIELDS.length) miscounted.push(`${p.name}: ${JSON.stringify(r)}`);
      }
      expect(leaks).toEqual([]);
      expect(miscounted).toEqual([]);
    });
});

describe("the trace id in the prompt", () => {
  it("an e-mail in the file name that became the trace id is not sent ('Trace bob.jones@…')", async () => {
    const trace = buildTrace({ id: "bob.jones@example.com.json#0", source: { file: "bob.jones@example.com.json", format: "test", index: 0 } }, [
      { agent: "user", role: "user", kind: "message", text: "Please fix the parser." },
      { agent: "coder", role: "assistant", kind: "message", text: "Done." },
    ]);
    const j = await judgeTrace(trace, [], { model: model() });
    expect(j.failed).toBe(false);
    expect(sentText()).not.toContain("bob.jones");
    expect(promptText(server.requests[0]!.body)).toContain("Trace [REDACTED:email]#0");
    expect(judgeOf(j.diagnosis).redactions).toEqual({ total: 1, byKind: { email: 1 } });
    // The diagnosis itself stays keyed by the real id (it never leaves the machine).
    expect(j.diagnosis.trace_id).toBe("bob.jones@example.com.json#0");
  });
});
