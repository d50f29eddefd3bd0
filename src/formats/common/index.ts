export * from "./values.js";
export { chatMessagesToSteps, isChatMessages, type ChatMappingOptions } from "./chat.js";
export { findUp } from "./sidecar.js";
