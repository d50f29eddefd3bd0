/**
 * faultline guards around an OpenAI chat-completions tool loop.
 *
 *   npx tsx examples/guards-openai.ts                      # scripted model: shows the guards intervening, offline
 *   OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_MODEL=… npx tsx examples/guards-openai.ts   # any OpenAI-compatible server
 *
 * The environment is a toy SRE incident: the cart service fails until it is restarted. The guards require proof
 * (the alert cleared) before the agent may declare success, stop repeated calls, and bound the run.
 */
import {
  guardSetFromConfig,
  OpenAIGuard,
  runGuardedChatLoop,
  type ChatAssistantMessage,
  type ChatMessage,
  type ChatToolCall,
  type ChatUsage,
  type GuardConfig,
} from "../src/guards/index.js";

// --- a toy incident ---------------------------------------------------------------------------------------------
let restarted = false;
const tools = {
  get_alerts: () => JSON.stringify({ firing: restarted ? 0 : 1, alerts: restarted ? [] : ["CartServiceFailure"] }),
  get_logs: (args: { service?: string }) => (args.service === "cart" ? "ERROR flag cartFailure=true; returning 500" : "no errors"),
  restart_deployment: (args: { name?: string }) => {
    restarted = args.name === "cart";
    return restarted ? "deployment.apps/cart restarted" : `deployment ${args.name} not found`;
  },
};
const toolSpecs = [
  { type: "function", function: { name: "get_alerts", description: "List firing alerts as JSON {firing, alerts}", parameters: { type: "object", properties: {} } } },
  { type: "function", function: { name: "get_logs", description: "Recent error logs of a service", parameters: { type: "object", properties: { service: { type: "string" } }, required: ["service"] } } },
  { type: "function", function: { name: "restart_deployment", description: "Restart a deployment", parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } },
];

// --- the guards: one JSON config, the same format `faultline replay --guards` reads --------------------------------
const config: GuardConfig = {
  termination: { maxSteps: 20 },
  verification: { evidence: [{ name: "alert cleared", description: "get_alerts reports no firing alert", match: { tool: "get_alerts" }, pass: { json: { firing: 0 } } }] },
  loop: { repeatWarnAt: 2, repeatBlockAt: 3 },
  context: true,
};
const guard = new OpenAIGuard(guardSetFromConfig(config));

// --- the model: a real server when configured, otherwise a script that misbehaves on purpose ----------------------
let n = 0;
const call = (name: string, args: object): ChatToolCall => ({ id: `call_${n++}`, type: "function", function: { name, arguments: JSON.stringify(args) } });
const script: ChatAssistantMessage[] = [
  { role: "assistant", content: "Let me check the logs with get_logs.", tool_calls: [call("get_logs", { service: "cart" })] },
  { role: "assistant", content: null, tool_calls: [call("get_logs", { service: "cart" })] },
  { role: "assistant", content: null, tool_calls: [call("get_logs", { service: "cart" })] },
  { role: "assistant", content: "Root cause identified: the cartFailure flag. The incident is resolved." },
  { role: "assistant", content: null, tool_calls: [call("restart_deployment", { name: "cart" })] },
  { role: "assistant", content: null, tool_calls: [call("get_alerts", {})] },
  { role: "assistant", content: "Verified: no alert is firing any more. The incident is resolved." },
];

async function complete(messages: ChatMessage[]): Promise<{ message: ChatAssistantMessage; usage?: ChatUsage }> {
  const base = process.env.OPENAI_BASE_URL;
  if (!base) return { message: script.shift() ?? { role: "assistant", content: "Done." } };
  const res = await fetch(`${base.replace(/\/$/, "")}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(process.env.OPENAI_API_KEY ? { authorization: `Bearer ${process.env.OPENAI_API_KEY}` } : {}) },
    body: JSON.stringify({ model: process.env.OPENAI_MODEL ?? "gpt-4o-mini", messages, tools: toolSpecs }),
  });
  if (!res.ok) throw new Error(`${base}: HTTP ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { choices: { message: ChatAssistantMessage }[]; usage?: ChatUsage };
  return { message: body.choices[0]!.message, ...(body.usage ? { usage: body.usage } : {}) };
}

const messages: ChatMessage[] = [
  { role: "system", content: "You are an SRE agent. Use the tools to find and fix the incident, then report." },
  { role: "user", content: "The cart service returns errors. Find the root cause and fix it." },
];
const result = await runGuardedChatLoop({
  guard,
  messages,
  complete,
  runTool: async (c) => {
    const fn = tools[c.function.name as keyof typeof tools] as ((a: object) => string) | undefined;
    return fn ? fn(JSON.parse(c.function.arguments || "{}") as object) : { content: `unknown tool ${c.function.name}`, isError: true };
  },
});

for (const v of guard.log)
  if (v.primary) console.log(`event ${v.seq} (${v.event.type}): ${v.primary.action.toUpperCase()} by ${v.primary.guard} [MAST ${v.primary.mode}] — ${v.primary.reason}`);
console.log(`\nended: ${result.ended} after ${result.turns} turns`);
const last = messages.at(-1);
if (last?.role === "assistant") console.log(`final answer: ${typeof last.content === "string" ? last.content : ""}`);
