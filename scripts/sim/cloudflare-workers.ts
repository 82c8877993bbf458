/**
 * `cloudflare:workers` outside workerd, for the code of src/ that also runs on Node
 * (this simulation, and the unit tests next to the source, through vitest.config.ts
 * and tsconfig.sim.json). The parts of a tenant's guard extend RpcTarget, which in
 * workerd only marks a class as passed by reference over RPC: a call within the
 * isolate is a plain method call. So an empty class stands in for it; nothing else of
 * the runtime is here (code that needs more of it runs in workerd).
 */
export class RpcTarget {}
