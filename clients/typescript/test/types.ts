/**
 * Compile-time checks of the handler types: `npm test` builds this file, and each
 * `@ts-expect-error` fails the build if the line it marks ever compiles.
 */
import {
  AssistantClient,
  type BuiltinMethods,
  DeviceError,
  type MethodSpec,
  type StandingApproval,
} from "@truloop/assistant-client";
import { useAgentRequests } from "@truloop/assistant-client/react";

type AppMethods = BuiltinMethods & { "location.getCurrent": MethodSpec<{ precise?: boolean }, { latitude: number; longitude: number }> };

export function handlerTypes(client: AssistantClient, app: AssistantClient<AppMethods>): void {
  client.register("calendar.getEvents", async (params) => {
    const range: string = `${params.startDate}..${params.endDate}`;
    return { events: [{ id: "e1", title: range, start: { dateTime: params.startDate }, end: { dateTime: params.endDate } }] };
  });
  client.register("interaction.confirm", (params) => ({ confirmed: params.title.length > 0 }));
  client.register("permissions.getStatus", () => ({ status: "notDetermined", canPromptAgain: true }));
  client.register("permissions.getStatus", () => {
    throw DeviceError.userCanceled();
  });
  // a method the types do not know: untyped params and result
  client.register("health.getSteps", (params) => ({ steps: 1200, date: params["date"] }));

  // @ts-expect-error a calendar result needs events
  client.register("calendar.getEvents", () => ({ items: [] }));
  // @ts-expect-error confirmed is a boolean
  client.register("interaction.confirm", () => ({ confirmed: "yes" }));
  // @ts-expect-error not one of the four statuses
  client.register("permissions.getStatus", () => ({ status: "allowed", canPromptAgain: true }));
  // the server's own dialogs: a yes with changes (and "always"), a no with a reason
  client.register("interaction.confirm", (params) => {
    const start = params.editable?.find((field) => field.name === "start_time");
    if (start === undefined) return { confirmed: true, remember: "always" };
    return { confirmed: true, edited: { start_time: "2026-12-02T12:30:00+09:00" } };
  });
  client.register("interaction.confirm", () => ({ confirmed: false, reason: "Mina is away that week" }));
  // @ts-expect-error remember is "always" or absent
  client.register("interaction.confirm", () => ({ confirmed: true, remember: "sometimes" }));
  // @ts-expect-error a reason is text
  client.register("interaction.confirm", () => ({ confirmed: false, reason: 7 }));
  // @ts-expect-error params of interaction.confirm have no startDate
  client.register("interaction.confirm", (params) => ({ confirmed: params.startDate === "" }));

  app.register("location.getCurrent", (params) => ({ latitude: params.precise ? 1 : 0, longitude: 0 }));
  // @ts-expect-error the app's own method is typed too
  app.register("location.getCurrent", () => ({ latitude: "north" }));
}

export function hookTypes(app: AssistantClient<AppMethods>): readonly string[] {
  // any client fits the hook, whatever its methods
  const { requests } = useAgentRequests(app, { loadPending: false });
  return requests.map((request) => request.method);
}

export function contextTypes(client: AssistantClient): void {
  // a handler gets the signal that aborts when its request settles elsewhere
  client.register("interaction.confirm", (_params, _request, { signal }) => ({ confirmed: !signal.aborted }));
  // @ts-expect-error the context has no such member
  client.register("interaction.confirm", (_params, _request, { cancel }) => ({ confirmed: cancel === undefined }));
}

export async function approvalTypes(client: AssistantClient): Promise<string[]> {
  // a settings screen: what runs without asking, since when, and ending one
  const approvals: StandingApproval[] = await client.approvals();
  await client.endApproval("create_event");
  // @ts-expect-error since is a Date, not the server's text
  const text: string = approvals[0]!.since;
  // what each covers, and until when (absent from a server that does not say)
  const covers = approvals.map(({ scope, until }) => `${JSON.stringify(scope ?? {})} ${until?.toISOString() ?? ""}`);
  return approvals.map(({ tool, since }) => `${tool} ${since.toISOString()} ${text}`).concat(covers);
}
