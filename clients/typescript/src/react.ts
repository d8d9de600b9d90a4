/**
 * React bindings (`@truloop/assistant-client/react`; React 18 or later, an optional peer
 * dependency): hooks that list the requests waiting on this device and the assistant's answers.
 */
import { useCallback, useEffect, useRef, useSyncExternalStore } from "react";
import type { Answer } from "./answers.js";
import type { PendingRequest } from "./calls.js";
import type { HandleResult } from "./options.js";
import type { AgentRpcRequest } from "./parse.js";

/** The part of an `AssistantClient` the hook uses (any client fits, whatever its methods). */
export interface AgentRequestSource {
  running(): readonly AgentRpcRequest[];
  subscribe(listener: () => void): () => void;
  pending(): Promise<PendingRequest[]>;
  handleRequest(request: AgentRpcRequest): Promise<HandleResult>;
}

export interface UseAgentRequestsOptions {
  /** Run the user's open requests (`client.pending()`) when the component mounts; default true. */
  loadPending?: boolean;
  /** Told when reading the open requests, or answering one of them, fails. */
  onError?: (error: unknown) => void;
}

export interface AgentRequests {
  /** The requests whose handler is running now (dialogs waiting for the user), oldest first. */
  requests: readonly AgentRpcRequest[];
  /**
   * Read the open requests again and run those not running yet (e.g. when the app returns to the
   * foreground); resolves once they are started, not answered.
   */
  refresh: () => Promise<void>;
}

/**
 * The requests waiting on this device, kept current: a request appears while its handler runs
 * (from a chat message given to `handleMessage`, or from `pending()`) and disappears when it is
 * answered or settles elsewhere. On mount it runs the user's open requests.
 */
export function useAgentRequests(client: AgentRequestSource, options: UseAgentRequestsOptions = {}): AgentRequests {
  const subscribe = useCallback((listener: () => void) => client.subscribe(listener), [client]);
  const snapshot = useCallback(() => client.running(), [client]);
  const requests = useSyncExternalStore(subscribe, snapshot, snapshot);
  const onError = useRef(options.onError);
  onError.current = options.onError;
  const refresh = useCallback(async () => {
    const report = (error: unknown) => onError.current?.(error);
    try {
      for (const request of await client.pending()) client.handleRequest(request).catch(report);
    } catch (error) {
      report(error);
    }
  }, [client]);
  const loadPending = options.loadPending ?? true;
  useEffect(() => {
    if (loadPending) void refresh();
  }, [refresh, loadPending]);
  return { requests, refresh };
}

/** The part of an `AssistantClient` {@link useAnswers} uses. */
export interface AnswerSource {
  answers(channelUrl?: string): readonly Answer[];
  subscribeAnswers(listener: () => void): () => void;
}

/**
 * The assistant's answers in a chat (of `channelUrl`, or of every channel), oldest first, kept
 * current: one bubble per message, its `text` growing in place while `streaming` is true (show a
 * subtle "writing…" mark then). It lists what reached `client.handleMessage`: hand it every
 * received and updated message (Sendbird's `onMessageReceived` and `onMessageUpdated`).
 */
export function useAnswers(client: AnswerSource, channelUrl?: string): readonly Answer[] {
  const subscribe = useCallback((listener: () => void) => client.subscribeAnswers(listener), [client]);
  const snapshot = useCallback(() => client.answers(channelUrl), [client, channelUrl]);
  return useSyncExternalStore(subscribe, snapshot, snapshot);
}
