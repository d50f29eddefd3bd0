/**
 * Dataset labels spell agent names with inconsistent casing (Who&When and AgentRx both write `Websurfer` for
 * `WebSurfer`). Labels are matched to the agents that actually speak in the trace, case-insensitively, so a label and
 * the steps it blames use one spelling. Names that match no agent are returned trimmed but otherwise unchanged.
 */
export function matchAgentName(name: string, knownAgents: Iterable<string>): string {
  const wanted = name.trim();
  const lower = wanted.toLowerCase();
  for (const agent of knownAgents) if (agent.toLowerCase() === lower) return agent;
  return wanted;
}
