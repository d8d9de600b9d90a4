/** What every test module shares: the one dev server of the run, and clients for its users. */
import { AssistantClient, type AssistantClientOptions, type MethodSpec } from "@truloop/assistant-client";
import { DevApi, type DevServer, freshChannel } from "./devserver.js";

let current: { server: DevServer; api: DevApi } | undefined;

export function useServer(server: DevServer): void {
  current = { server, api: new DevApi(server.baseUrl) };
}

/** The dev API of the run's server. */
export function dev(): DevApi {
  if (current === undefined) throw new Error("no dev server: run the tests through all.test.js");
  return current.api;
}

/**
 * A client signed in as `userId` (also its `userId` option unless `options` says otherwise), its
 * token from the dev server (fetched once, and again when the client asks for a fresh one).
 */
export function clientFor<Methods extends { [K in keyof Methods]: MethodSpec }>(
  userId: string,
  options: Partial<AssistantClientOptions> = {},
): AssistantClient<Methods> {
  let token: Promise<string> | undefined;
  return new AssistantClient<Methods>({
    baseUrl: dev().baseUrl,
    getToken: ({ refresh }) => {
      if (token === undefined || refresh) token = dev().token(userId);
      return token;
    },
    userId,
    ...options,
  });
}

/** A fresh channel where `user` asked for this week's schedule, and the assistant's request to the phone. */
export async function askForSchedule(label: string, user: string) {
  const channel = freshChannel(label);
  const asked = await dev().post(channel, user, "이번 주 일정 알려줘");
  const rpc = await dev().nextRpc(channel, asked);
  return { channel, asked, rpc, id: (JSON.parse(rpc.data) as { id: string }).id };
}
