// The call a question is asked from. A tool asks through the session's policy,
// which is shared by every call of the session, so the question does not know
// its call; the pipeline runs each call inside a scope that the session reads
// when it asks (`SessionBase.choose`), and a host that shows more than the
// message (a web console) can say which tool asks. Only for hosts that say so
// (`Host.showsCall`): the scope costs about a microsecond a call.

import { AsyncLocalStorage } from "node:async_hooks";

/** The call in flight: its tool and id. */
export interface CallScope {
  tool: string;
  callId?: string;
}

// Made on first use: under Deno, a live AsyncLocalStorage slows every call's promises a little.
let scopes: AsyncLocalStorage<CallScope> | undefined;

/** Runs `fn` as the call `scope`. */
export function inCallScope<R>(scope: CallScope, fn: () => R): R {
  scopes ??= new AsyncLocalStorage<CallScope>();
  return scopes.run(scope, fn);
}

/** The call running in this async context, if any. */
export function currentCallScope(): CallScope | undefined {
  return scopes?.getStore();
}
