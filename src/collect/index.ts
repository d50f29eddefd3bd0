export { startCollector, DEFAULT_COLLECT_PORT, type CollectorOptions, type RunningCollector } from "./collector.js";
export { createReceiver, splitSpans, type ReceiverOptions, type ReceivedSpan } from "./receiver.js";
export { decodeRequest, decompress, encodingOf, responseBody, OtlpRequestError } from "./decode.js";
export { ensureLiveRun, sweep, type LiveRun, type SweepOptions } from "./assemble.js";
