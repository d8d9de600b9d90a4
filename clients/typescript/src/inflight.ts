import type { AgentRpcRequest } from "./parse.js";

/**
 * The requests whose handler is running, each with the controller that aborts it when its call
 * settles elsewhere; what a UI lists as open (see `AssistantClient.running`).
 */
export class InFlight {
  private readonly entries = new Map<string, { request: AgentRpcRequest; controller: AbortController }>();
  private readonly listeners = new Set<() => void>();
  /** Replaced on every change, the same array otherwise (as React's `useSyncExternalStore` needs). */
  private snapshot: readonly AgentRpcRequest[] = [];

  /** A request's handler starts: the signal it gets. */
  start(key: string, request: AgentRpcRequest): AbortSignal {
    const controller = new AbortController();
    this.entries.set(key, { request, controller });
    this.changed();
    return controller.signal;
  }

  /** Its handler ended. */
  end(key: string): void {
    if (this.entries.delete(key)) this.changed();
  }

  /** Its call settled elsewhere: abort its handler with `reason` and list it no longer. */
  abort(key: string, reason: Error): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    entry.controller.abort(reason);
    this.changed();
  }

  requests(): readonly AgentRpcRequest[] {
    return this.snapshot;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private changed(): void {
    this.snapshot = [...this.entries.values()].map((entry) => entry.request);
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // one failing listener must not keep the others (or the request) waiting
      }
    }
  }
}
