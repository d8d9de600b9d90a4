/**
 * Standing approvals: what a person allowed without asking with `"remember": "always"` in a
 * confirmation dialog that offered it (`params.always`; `GET /api/v1/agent/approvals`), each for 30
 * days or until they end it (`DELETE /api/v1/agent/approvals/{tool}`).
 */
import { isObject } from "./parse.js";

/** Calls of a tool that run without asking the person, since they said "always" to one like them. */
export interface StandingApproval {
  /** The server tool's name, e.g. `create_event`. */
  tool: string;
  /** When the person said "always" to it. */
  since: Date;
  /** When it ends (30 days after `since`); absent from a server that does not say. */
  until?: Date;
  /**
   * Which of the tool's calls it covers, as the dialog's `always.scope` said: `{invitees,
   * description}` for events (no one else invited, no other description), `{user_id}` for
   * messages (that recipient only), `{}` for `save_memory`; absent from a server that does not say.
   */
  scope?: Record<string, unknown>;
}

/** A standing approval of the approvals endpoint, or `undefined` when it is not one. */
export function readApproval(value: unknown): StandingApproval | undefined {
  if (!isObject(value)) return undefined;
  const { tool, since, until, scope } = value;
  if (typeof tool !== "string" || tool === "" || typeof since !== "string") return undefined;
  const date = new Date(since);
  if (Number.isNaN(date.getTime())) return undefined;
  const approval: StandingApproval = { tool, since: date };
  if (typeof until === "string" && !Number.isNaN(new Date(until).getTime())) approval.until = new Date(until);
  if (isObject(scope)) approval.scope = scope;
  return approval;
}
