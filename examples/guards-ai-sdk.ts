/**
 * faultline guards in a Vercel AI SDK tool loop (AI SDK 5: generateText with onStepFinish / prepareStep / stopWhen).
 *
 *   npx tsx examples/guards-ai-sdk.ts          # offline: a scripted stand-in calls the hooks the way generateText does
 *   npm i ai @ai-sdk/openai-compatible && OPENAI_BASE_URL=http://localhost:8000/v1 OPENAI_MODEL=… npx tsx examples/guards-ai-sdk.ts
 *
 * faultline does not depend on `ai`; the adapter speaks its callback shapes structurally.
 * Toy incident: the cart deployment is broken until it is restarted. The request names no namespace, so the clarify
 * gate keeps the agent read-only until it asks; the verification gate wants a passing health check before "fixed".
 */
import { z } from "zod";
import { AiSdkGuard, guardSetFromConfig, type AiSdkStepLike, type AiSdkToolLike } from "../src/guards/index.js";

let healthy = false;
const tools = {
  healthCheck: { description: "Health of a service", inputSchema: z.object({ service: z.string() }), execute: async ({ service }: { service: string }) => (service === "cart" && healthy ? "cart: healthy" : `${service}: failing`) },
  restartDeployment: {
    description: "Restart a deployment in a namespace",
    inputSchema: z.object({ name: z.string(), namespace: z.string().optional() }),
    execute: async ({ name }: { name: string }) => {
      healthy = name === "cart";
      return `deployment ${name} restarted`;
    },
  },
};

const guards = guardSetFromConfig({
  termination: { maxSteps: 15 },
  verification: { evidence: [{ name: "health check passed", match: { tool: "healthCheck", args: { service: "cart" } }, pass: { output: "healthy" } }] },
  clarify: { rules: [{ name: "namespace missing", description: "which namespace is the cart service in?", missing: "namespace" }] },
  loop: true,
});
const guard = new AiSdkGuard(guards);
const prompt = "The cart service is down. Fix it.";
guard.input(prompt);

type Msg = { role: string; content: unknown };
type GenerateTextLike = (o: {
  messages: Msg[];
  tools: Record<string, AiSdkToolLike>;
  onStepFinish: (s: AiSdkStepLike) => void;
  prepareStep: (o: { messages: Msg[] }) => { messages: Msg[] } | undefined;
  stopWhen: ((o: { steps: unknown[] }) => boolean)[];
}) => Promise<{ response: { messages: Msg[] } }>;

/** The real generateText when `ai` and a server are available. Module names are variables: `ai` is not a dependency. */
async function realGenerateText(): Promise<GenerateTextLike | undefined> {
  if (!process.env.OPENAI_BASE_URL) return undefined;
  const aiName = "ai";
  const providerName = "@ai-sdk/openai-compatible";
  const ai = await import(aiName).catch(() => undefined);
  const provider = await import(providerName).catch(() => undefined);
  if (!ai || !provider) {
    console.log("OPENAI_BASE_URL is set but `ai` / `@ai-sdk/openai-compatible` are not installed; running the scripted stand-in.");
    return undefined;
  }
  const model = provider.createOpenAICompatible({ name: "local", baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY })(process.env.OPENAI_MODEL ?? "gpt-4o-mini");
  return (o) => ai.generateText({ model, ...o, stopWhen: [ai.stepCountIs(20), ...o.stopWhen] });
}

type ScriptStep = { text?: string; calls?: { name: string; input: unknown }[] };

/** Offline stand-in: plays a script, calling the hooks in generateText's order, until a step without tool calls. */
function scriptedGenerateText(script: ScriptStep[]): GenerateTextLike {
  let id = 0;
  return async (o) => {
    const steps: AiSdkStepLike[] = [];
    for (let s = script.shift(); s; s = script.shift()) {
      o.prepareStep({ messages: o.messages });
      const toolCalls = (s.calls ?? []).map((c) => ({ toolCallId: `t${id++}`, toolName: c.name, input: c.input }));
      const toolResults = await Promise.all(toolCalls.map(async (c) => ({ ...c, output: await o.tools[c.toolName]!.execute!(c.input, { toolCallId: c.toolCallId, messages: o.messages }) })));
      const step = { text: s.text ?? "", toolCalls, toolResults, finishReason: toolCalls.length ? "tool-calls" : "stop" };
      steps.push(step);
      o.onStepFinish(step);
      if (toolCalls.length === 0 || o.stopWhen.some((f) => f({ steps }))) break;
    }
    return { response: { messages: [] } };
  };
}

const real = await realGenerateText();
const generate =
  real ??
  scriptedGenerateText([
    { calls: [{ name: "healthCheck", input: { service: "cart" } }, { name: "restartDeployment", input: { name: "cart" } }] },
    { text: "Which namespace is the cart deployment in?" },
    { calls: [{ name: "restartDeployment", input: { name: "cart", namespace: "otel-demo" } }] },
    { text: "Fixed: the cart service is running again." },
    { calls: [{ name: "healthCheck", input: { service: "cart" } }] },
    { text: "Verified: the health check passes. The cart service is fixed." },
  ]);

let messages: Msg[] = [{ role: "user", content: prompt }];
const hooks = { tools: guard.wrapTools(tools), onStepFinish: guard.onStepFinish, prepareStep: guard.prepareStep, stopWhen: [guard.stopWhen] };
let result = await generate({ messages, ...hooks });

// The model asked which namespace (with a real model: it should, since the gate kept it read-only); answer and go on.
const answer = "It is in namespace otel-demo.";
guard.input(answer);
messages = [...messages, ...result.response.messages, { role: "user", content: answer }];
result = await generate({ messages, ...hooks });
// A refused completion ends generateText; continue with the guard's message until accepted or stopped.
for (let round = 0; guard.refusedCompletion && round < 3; round++) {
  messages = [...messages, ...result.response.messages, ...guard.takeInjections()];
  result = await generate({ messages, ...hooks });
}

for (const v of guard.log)
  if (v.primary) console.log(`event ${v.seq} (${v.event.type}): ${v.primary.action.toUpperCase()} by ${v.primary.guard} [MAST ${v.primary.mode}] — ${v.primary.reason}`);
console.log(`\ncompleted: ${guard.completed}, stopped: ${guard.stopped}`);
