/**
 * Standing approvals: the tools a person allowed for good with `"remember": "always"` in a
 * confirmation dialog (`GET /api/v1/agent/approvals`), each until they end it
 * (`DELETE /api/v1/agent/approvals/{tool}`).
 */
import { isObject } from "./parse.js";

/** A tool whose calls run without asking the person, since they said "always" to it. */
export interface StandingApproval {
  /** The server tool's name, e.g. `create_event`. */
  tool: string;
  /** When the person first said "always" to it. */
  since: Date;
}

/** A standing approval of the approvals endpoint, or `undefined` when it is not one. */
export function readApproval(value: unknown): StandingApproval | undefined {
  if (!isObject(value)) return undefined;
  const { tool, since } = value;
  if (typeof tool !== "string" || tool === "" || typeof since !== "string") return undefined;
  const date = new Date(since);
  return Number.isNaN(date.getTime()) ? undefined : { tool, since: date };
}
