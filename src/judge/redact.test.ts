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

/** Redacts `text` with the default patterns; returns the output and the counts. */
function redact(text: string, r = new Redactor()): { out: string; counts: Record<string, number> } {
  const counts: Record<string, number> = {};
  return { out: r.text(text, counts), counts };
}

describe("Redactor — leaks reported in issue 12 (item 10)", () => {
  it("1. a lowercase `authorization: bearer …` header", () => {
    const { out, counts } = redact("curl -H 'authorization: bearer Zx9abcDEFghiJKL0123mno' https://api.example.com/v1");
    expect(out).not.toContain("Zx9abcDEFghiJKL0123mno");
    expect(out).toContain("authorization: bearer [REDACTED:bearer-token]");
    expect(counts).toEqual({ "bearer-token": 1 });
  });

  it("2. `AWS_SECRET_ACCESS_KEY=…` (env-style NAME_SECRET… assignment)", () => {
    const { out, counts } = redact("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\naws s3 ls");
    expect(out).not.toContain("wJalrXUtnFEMI");
    expect(out).toBe("export AWS_SECRET_ACCESS_KEY=[REDACTED:secret-assignment]\naws s3 ls");
    expect(counts).toEqual({ "secret-assignment": 1 });
  });

  it("3. `DB_PASSWORD=…`, and the other NAME_PASSWORD / NAME_TOKEN / NAME_API_KEY forms", () => {
    const { out, counts } = redact(
      [
        "DB_PASSWORD=Tr0ub4dor-and-3",
        "POSTGRES_PASSWORD: 'pg-pass-x1'",
        'SLACK_BOT_TOKEN="tok-value-77"',
        "set MY_SERVICE_API_KEY=svc-key-9f8e7d",
        "docker run -e REDIS_PASSWD=r3d1s-pw app",
        "mysql --password=hunter2x db",
        "spring.datasource.password=jdbcPw42",
      ].join("\n"),
    );
    for (const s of ["Tr0ub4dor-and-3", "pg-pass-x1", "tok-value-77", "svc-key-9f8e7d", "r3d1s-pw", "hunter2x", "jdbcPw42"]) expect(out).not.toContain(s);
    expect(out).toContain("DB_PASSWORD=[REDACTED:secret-assignment]");
    expect(out).toContain("POSTGRES_PASSWORD: '[REDACTED:secret-assignment]'");
    expect(out).toContain("docker run -e REDIS_PASSWD=[REDACTED:secret-assignment] app");
    expect(counts).toEqual({ "secret-assignment": 7 });
  });

  it("4. structured arguments: `{\"password\": …}` as an object, as JSON text and double-encoded", () => {
    const r = new Redactor();
    const counts: Record<string, number> = {};
    const args = r.value(
      {
        user: "alice",
        password: "correct horse battery staple",
        nested: { client_secret: "cs-1234", db_password: 987654321, apiKey: "ak-55aa", token: ["t-one-1", "t-two-2"], Cookie: "sid=abc123; theme=dark" },
        keep: { max_tokens: 1024, max_token: 512, password_field_label: "Your password", token_count: 17, secret: true, passwd: null, api_key: "<your key>" },
      },
      counts,
    ) as Record<string, unknown>;
    const json = JSON.stringify(args);
    for (const s of ["correct horse battery staple", "cs-1234", "987654321", "ak-55aa", "t-one-1", "t-two-2", "abc123"]) expect(json).not.toContain(s);
    expect(args.user).toBe("alice");
    expect(args.keep).toEqual({ max_tokens: 1024, max_token: 512, password_field_label: "Your password", token_count: 17, secret: true, passwd: null, api_key: "<your key>" });
    expect(counts).toEqual({ "secret-assignment": 6, "auth-header": 1 });

    const text = redact('{"username": "bob", "password": "pa ss\\"word", "otp": 123}');
    expect(text.out).toBe('{"username": "bob", "password": "[REDACTED:secret-assignment]", "otp": 123}');
    const double = redact(String.raw`{"arguments": "{\"api_key\": \"dbl-enc-s3cret\", \"passwd\":\"x\", \"q\": \"weather\"}"}`);
    expect(double.out).not.toContain("dbl-enc-s3cret");
    expect(double.out).toBe(String.raw`{"arguments": "{\"api_key\": \"[REDACTED:secret-assignment]\", \"passwd\":\"[REDACTED:secret-assignment]\", \"q\": \"weather\"}"}`);
    const triple = redact(String.raw`"{\"body\": \"{\\\"password\\\": \\\"tr1ple\\\"}\"}"`);
    expect(triple.out).not.toContain("tr1ple");
  });

  it("5. a PEM private key cut off before its END line", () => {
    const body = ["MIIEpAIBAAKCAQEA0truncatedKeyBody0123456789abcdefABCDEF", "QWxhZGRpbjpvcGVuIHNlc2FtZQ+/abcdefghijklmnopqrstuvwx"];
    const cut = redact(`key file:\n-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}`);
    for (const b of body) expect(cut.out).not.toContain(b);
    expect(cut.out).toBe("key file:\n[REDACTED:private-key]");
    expect(cut.counts).toEqual({ "private-key": 1 });
    // The same inside a JSON string (escaped newlines), with prose after the body, and with a half END line.
    const escaped = redact(`{"out": "-----BEGIN OPENSSH PRIVATE KEY-----\\n${body.join("\\n")}\\n-----END OPENSS`);
    for (const b of body) expect(escaped.out).not.toContain(b);
    const prose = redact(`-----BEGIN PRIVATE KEY-----\n${body[0]}\n${body[1]}\nThe file was cut here.`);
    expect(prose.out).toBe("[REDACTED:private-key]\nThe file was cut here.");
    const flat = redact(`-----BEGIN EC PRIVATE KEY----- ${body[0]} ${body[1]} (truncated)`);
    for (const b of body) expect(flat.out).not.toContain(b);
  });

  it("6. `Authorization: Basic …`, and `curl -u user:password`", () => {
    const { out, counts } = redact(
      ["Authorization: Basic dXNlcjpodW50ZXIy", "headers = {'authorization': 'basic YWxhZGRpbjpvcGVuc2VzYW1l'}", "curl -u admin:S3cretPw https://x.example.com"].join("\n"),
    );
    for (const s of ["dXNlcjpodW50ZXIy", "YWxhZGRpbjpvcGVuc2VzYW1l", "S3cretPw"]) expect(out).not.toContain(s);
    expect(out).toContain("Authorization: Basic [REDACTED:basic-auth]");
    expect(out).toContain("curl -u admin:[REDACTED:basic-auth] https");
    expect(counts).toEqual({ "basic-auth": 3 });
  });

  it("7. an e-mail in a file name that became the trace id", () => {
    const trace = buildTrace({ id: "trace_bob.jones@example.com.json#2", source: { file: "trace_bob.jones@example.com.json", format: "test", index: 2 } }, [
      { agent: "a", role: "assistant", kind: "message", text: "hi" },
    ]);
    const r = new Redactor().trace(trace);
    expect(r.trace.id).not.toContain("bob");
    expect(r.trace.id).toBe("[REDACTED:email]#2");
    expect(r.counts).toEqual({ email: 1 });
    // URL-encoded too.
    expect(redact("GET /u/bob.jones%40example.com/profile").out).toBe("GET /u/[REDACTED:email]/profile");
  });

  it("redacts every string the renderer shows: id, task, agents, step text, tags, tool name, args, output", () => {
    const E = "leak@example.com";
    const trace = buildTrace({ id: `id-${E}`, source: { file: "f", format: "test", index: 0 }, task: { text: E } }, [
      { agent: `agent ${E}`, role: "assistant", kind: "tool_call", text: E, tags: [`tag ${E}`], tool: { name: `tool ${E}`, args: { [E]: E }, output: E } },
    ]);
    const r = new Redactor().trace(trace);
    expect(JSON.stringify({ id: r.trace.id, task: r.trace.task, agents: r.trace.agents, steps: r.trace.steps })).not.toContain(E);
    expect(r.counts).toEqual({ email: 10 });
  });

  it("hints: evidence, rationale and the detector name", () => {
    const counts: Record<string, number> = {};
    const [f] = new Redactor().findings([{ mode: "2.6", confidence: 1, steps: [1], evidence: "DB_PASSWORD=abc123", rationale: "mailed x@y.example.com", detector: "rules/ops@corp.example.com" }], counts);
    expect(JSON.stringify(f)).not.toMatch(/abc123|x@y|ops@corp/);
    expect(counts).toEqual({ "secret-assignment": 1, email: 2 });
  });
});

describe("Redactor — common high-signal token formats (gitleaks / detect-secrets)", () => {
  const cases: [string, string, string][] = [
    ["api-key", "GitHub classic token", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"],
    ["api-key", "GitHub OAuth token", "gho_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"],
    ["api-key", "GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU"],
    ["api-key", "Slack bot token", "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUv"],
    ["api-key", "Slack app token", "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef0123456789"],
    ["api-key", "Slack webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"],
    ["api-key", "Stripe live secret key", "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"],
    ["api-key", "Stripe restricted key", "rk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"],
    ["api-key", "Google API key", "AIza" + "SyD-abcdefghijklmnopqrstuvwxyz12345"],
    ["api-key", "Google OAuth access token", "ya29.a0AfH6SMBx-abcdefghijklmnopqrstuvwxyz0123"],
    ["api-key", "AWS access key id", "AKIA" + "IOSFODNN7EXAMPLE"],
    ["api-key", "AWS temporary access key id", "ASIA" + "IOSFODNN7EXAMPLE"],
    ["api-key", "OpenAI project key", "sk-proj-" + "AbCdEfGhIjKlMnOpQrStUvWx0123456789"],
    ["api-key", "Anthropic key", "sk-ant-api03-" + "AbCdEfGhIjKlMnOpQrStUvWx0123456789"],
    ["api-key", "Hugging Face token", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWx0123456789"],
    ["api-key", "GitLab token", "glpat-" + "AbCdEfGhIjKlMnOpQrSt"],
    ["api-key", "npm token", "npm_" + "AbCdEfGhIjKlMnOpQrStUvWx0123456789ab"],
    ["api-key", "SendGrid key", "SG." + "abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"],
    ["jwt", "JSON web token", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"],
  ];
  for (const [kind, name, secret] of cases)
    it(`${name} → ${kind}`, () => {
      const { out, counts } = redact(`value: ${secret} (end)`);
      expect(out).toBe(`value: [REDACTED:${kind}] (end)`);
      expect(counts).toEqual({ [kind]: 1 });
    });

  it("passwords and secrets in URLs and query strings", () => {
    const { out, counts } = redact("GET https://api.example.com/login?user=bob&password=hunter2&next=/home and https://x.example.com/cb?client_secret=cs_9f8e&code=ok");
    expect(out).toBe("GET https://api.example.com/login?user=bob&password=[REDACTED:secret-assignment]&next=/home and https://x.example.com/cb?client_secret=[REDACTED:secret-assignment]&code=ok");
    expect(counts).toEqual({ "secret-assignment": 2 });
  });
});

describe("Redactor — precision: ordinary text stays as it is", () => {
  const keep = [
    "Ran pytest: 3 passed, 1 failed in 2.31s. See https://docs.example.com/page?id=42&lang=en and version 1.2.3.",
    "The password_field_label and password_reset_url settings live in forms.py; get_token_count() returns max_tokens.",
    "def login(username: str, password: str) -> Token:",
    "interface Creds { token: string; secret?: boolean }",
    "token = os.environ['GITHUB_TOKEN']; password=None; api_key=args.api_key; secret = config.secret",
    "export DB_PASSWORD=$DB_PASSWORD_FROM_VAULT && echo ${API_TOKEN}",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main), tree 9c1185a5c5e9fc54612808977ee8f548b2258d31",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, md5 d41d8cd98f00b204e9800998ecf8427e",
    "request 123e4567-e89b-12d3-a456-426614174000 for session_id=9b2d3c1e-0f4a-4b7e-8c3d-2a1b0c9d8e7f",
    "The tokenizer splits each token into bytes; a bearer of bad news; Basic JavaScript and Basic Authentication docs.",
    "Authorization is required for this endpoint; the secret sauce is patience.",
    "if (!password) throw new Error('Password: required');",
    "assert resp.json() == {'ok': True}  # cookie handling tested elsewhere",
    "git push -u origin main; docker run -u 1000:1000 img; kubectl get secret my-secret -n prod",
    "The API key looked like sk-... but was truncated; see AKIA docs.",
    "task-abcdefghijklmnopqrstuvwxyz0123 and risk-adjusted-return-calculation-module",
    '{"type": "password", "name": "password", "placeholder": "Enter password"}',
    // Seen in the corpus runs: prose, code reading a token, comparisons, f-strings and placeholders.
    "1. Obtain a Valid Wikimedia API Token: Follow the instructions on the site.",
    'let token = try tokens.shift()? else "" end; if (token == "--") and (opt_stop == false) then',
    "headers = {'Authorization': f'Bearer {token}'}; API_KEY = 'YOUR_API_KEY'; api_key: <your-api-key>",
    "password = forms.CharField(label=_('Password'), strip=False); passwd = conn_params.get('password', '')",
  ];
  for (const text of keep)
    it(JSON.stringify(text.slice(0, 60)), () => {
      const { out, counts } = redact(text);
      expect(out).toBe(text);
      expect(counts).toEqual({});
    });
});

describe("Redactor — cost", () => {
  it("stays near-linear on adversarial inputs (no catastrophic backtracking)", () => {
    const n = 100_000;
    const inputs = [
      "a.".repeat(n / 2) + "@", // was quadratic in the URL-password pattern
      "a_b.c-".repeat(n / 6),
      '"password": "'.repeat(n / 14),
      "token: ".repeat(n / 7),
      "authorization:".repeat(n / 14),
      "-----BEGIN RSA PRIVATE KEY-----\n" + "QUFB\n".repeat(n / 5),
      "bearer ".repeat(n / 7),
      "\\\"".repeat(n / 2),
    ];
    const r = new Redactor();
    const start = performance.now();
    for (const s of inputs) r.text(s, {});
    expect(performance.now() - start).toBeLessThan(5000);
  });
});

describe("Redactor — configuration", () => {
  it("--keep switches each new kind off, and a custom pattern still applies after the built-ins", () => {
    const text = "DB_PASSWORD=hunter2 authorization: basic dXNlcjpodW50ZXIy Cookie: sid=abc123";
    expect(redact(text, new Redactor({ disable: ["secret-assignment", "basic-auth", "auth-header"] })).out).toBe(text);
    const r = new Redactor({ disable: ["secret-assignment", "auth-header"], patterns: [{ kind: "sid", pattern: "sid=\\w+" }] });
    expect(redact(text, r)).toEqual({ out: "DB_PASSWORD=hunter2 authorization: basic [REDACTED:basic-auth] Cookie: [REDACTED:sid]", counts: { "basic-auth": 1, sid: 1 } });
    // Key-based redaction of structured values follows the kind's switch.
    expect(new Redactor({ disable: ["secret-assignment"] }).value({ password: "pw-123" }, {})).toEqual({ password: "pw-123" });
    expect(new Redactor({ defaults: false }).value({ password: "pw-123" }, {})).toEqual({ password: "pw-123" });
  });
});
