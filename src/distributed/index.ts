export { submit, DEFAULT_RULES_SPEC, type SubmitOptions, type SubmitResult } from "./submit.js";
export { runWorker, type WorkerOptions, type WorkerResult, type JudgeFactory } from "./worker.js";
export { openQueue, queueFor, DIAGNOSE_QUEUE, JUDGE_QUEUE, DEFAULT_POLICY, type QueuePolicy, type DiagnoseJob } from "./queue.js";
export { JUDGE_SPEC_KEYS, type WorkSpec, type JudgeSpec } from "./spec.js";
