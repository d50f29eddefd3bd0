import type { TaxonomyData } from "./types.js";

/**
 * MAST, the Multi-Agent System Failure Taxonomy, pinned to the codes, names, stages and meanings of
 * Cemri et al., arXiv 2503.13657 v3. Definitions are our own paraphrase, not the official annotator's text.
 * 3.2 and 3.3 follow the paper: 3.2 = no or incomplete verification, 3.3 = incorrect verification. Other
 * artefacts swap them (the annotator's definitions file and answer line); the aliases below keep the paper meaning.
 */
export const MAST_V3: TaxonomyData = {
  id: "mast",
  version: "mast-v3",
  title: "MAST: Multi-Agent System Failure Taxonomy (paper v3)",
  source: "Cemri et al., Why Do Multi-Agent LLM Systems Fail?, arXiv 2503.13657 v3 (NeurIPS 2025 D&B)",
  categories: [
    {
      id: "FC1",
      name: "System Design Issues",
      aliases: ["Specification Issues", "Specification and System Design Failures"],
      description:
        "The cause lies in how the system was built: its architecture, role and prompt specification, or control flow.",
    },
    {
      id: "FC2",
      name: "Inter-Agent Misalignment",
      aliases: [],
      description:
        "The exchange goes wrong during execution, between agents or between an agent and its environment.",
    },
    {
      id: "FC3",
      name: "Task Verification",
      aliases: ["Task Verification and Termination"],
      description: "Outputs are checked poorly or not at all, or the run stops at the wrong moment.",
    },
  ],
  modes: [
    {
      code: "1.1",
      name: "Disobey task specification",
      category: "FC1",
      stages: ["pre", "exec"],
      definition:
        "The run breaks an explicit requirement of the task — output format, scope, a limit, a required feature or a forbidden action — so the result is wrong, degraded or off-contract.",
      aliases: ["Disobey Task Specification", "Poor task constraint compliance"],
    },
    {
      code: "1.2",
      name: "Disobey role specification",
      category: "FC1",
      stages: ["pre", "exec"],
      definition:
        "An agent steps outside its assigned role and does work, or takes decisions, that belong to another role.",
      aliases: ["Disobey Role Specification"],
    },
    {
      code: "1.3",
      name: "Step repetition",
      category: "FC1",
      stages: ["exec"],
      definition:
        "Work already done is redone without need: the same tool call, message or phase again, often in a loop, wasting turns or overwriting results.",
      aliases: ["Step Repetition"],
    },
    {
      code: "1.4",
      name: "Loss of conversation history",
      category: "FC1",
      stages: ["pre", "exec"],
      definition:
        "Recent context drops out and the agent acts as if later turns never happened, falling back to an earlier state of the work.",
      aliases: ["Loss of Conversation History", "Backtracking interruption"],
    },
    {
      code: "1.5",
      name: "Unaware of termination conditions",
      category: "FC1",
      stages: ["pre", "exec", "post"],
      definition:
        "The agents do not know or do not notice the stopping criteria, so the interaction runs on past the point where it should end.",
      aliases: ["Unaware of Termination Conditions", "Unaware of Stopping Conditions", "Unaware of stopping conditions"],
    },
    {
      code: "2.1",
      name: "Conversation reset",
      category: "FC2",
      stages: ["exec"],
      definition: "The dialogue restarts abruptly or for no good reason, discarding the context and progress gathered.",
      aliases: ["Conversation Reset"],
    },
    {
      code: "2.2",
      name: "Fail to ask for clarification",
      category: "FC2",
      stages: ["pre", "exec"],
      definition:
        "Information is missing or ambiguous and the agent proceeds on guesses instead of asking the user or another agent.",
      aliases: ["Fail to Ask for Clarification", "Fail to elicit clarification"],
    },
    {
      code: "2.3",
      name: "Task derailment",
      category: "FC2",
      stages: ["exec"],
      definition:
        "The work drifts from the stated objective toward unrelated or unproductive activity, such as solving another problem.",
      aliases: ["Task Derailment", "Derailment from task"],
    },
    {
      code: "2.4",
      name: "Information withholding",
      category: "FC2",
      stages: ["pre", "exec"],
      definition:
        "An agent holds information another agent needs and does not pass it on, or passes on an incomplete or wrong version.",
      aliases: ["Information Withholding", "Information Witholding", "Withholding relevant information"],
    },
    {
      code: "2.5",
      name: "Ignored other agent's input",
      category: "FC2",
      stages: ["exec"],
      definition:
        "A correction, suggestion or result from another agent is disregarded or underweighted, and a worse decision follows.",
      aliases: ["Ignored Other Agent's Input", "Ignored Other Agents' Input", "Ignoring suggestions from agents"],
    },
    {
      code: "2.6",
      name: "Reasoning-action mismatch",
      category: "FC2",
      stages: ["pre", "exec"],
      definition:
        "What an agent concludes or announces differs from what it does next, or it claims an action or check that never happened.",
      aliases: [
        "Reasoning-Action Mismatch",
        "Action-Reasoning Mismatch",
        "Inconsistency between reasoning and action",
      ],
    },
    {
      code: "3.1",
      name: "Premature termination",
      category: "FC3",
      stages: ["exec", "post"],
      definition:
        "The run ends before the objective is met or before needed outputs or information have been produced or handed over.",
      aliases: ["Premature Termination"],
    },
    {
      code: "3.2",
      name: "No or incomplete verification",
      category: "FC3",
      stages: ["post"],
      definition: "The result is never checked, or only part of it is, so errors pass through undetected.",
      aliases: ["No or Incomplete Verification", "Lack of result verification"],
    },
    {
      code: "3.3",
      name: "Incorrect verification",
      category: "FC3",
      stages: ["post"],
      definition:
        "A check happens but it is superficial or wrong and misses what matters, so the system believes it verified what it did not.",
      aliases: ["Incorrect Verification", "Lack of critical verification"],
    },
  ],
  notes: [
    "3.2/3.3 follow the paper v3 meaning. The official annotator's definitions file calls 3.2 'Weak Verification' and 3.3 'No or Incorrect Verification' (swapped), and its answer line swaps them again; MAST-Data's 3.2/3.3 labels therefore mix both meanings. Names from those artefacts are not accepted as aliases here because they would point to the wrong code; compare MAST-Data on the merged FC3-verification flag (3.2 or 3.3).",
    "Codes are accepted as '1.1' or 'FM-1.1'; names are matched case-insensitively with punctuation folded.",
  ],
};
