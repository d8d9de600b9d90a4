export {
  type Answer,
  AnswerBubbles,
  type AnswerBubblesOptions,
  type AnswerEvent,
  DEFAULT_STALL_MS,
  parseAnswer,
} from "./answers.js";
export { type StandingApproval } from "./approvals.js";
export {
  type CallInfo,
  type CallState,
  isSettledMessage,
  parseSettled,
  type PendingRequest,
  type SettledCall,
  type SettledState,
} from "./calls.js";
export { AssistantClient } from "./client.js";
export { type AssistantClientOptions, type Handler, type HandlerContext, type HandleResult } from "./options.js";
export { type DeclareToolsResult, type StopResult, type ToolMessageOutcome } from "./endpoints.js";
export {
  AgentRpcParseError,
  AssistantApiError,
  CallSettledError,
  ConflictError,
  DeviceError,
  isErrorOf,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
  UnprocessableError,
} from "./errors.js";
export {
  type Clock,
  DEFAULT_RETRY_POLICY,
  type FetchLike,
  type FetchResponseLike,
  type GetToken,
  type RetryPolicy,
} from "./http.js";
export { type AgentRpcRequest, isAgentRpcMessage, type ParseOptions, parseAgentRpc, recipientOf, senderOf } from "./parse.js";
export * from "./protocol.js";
