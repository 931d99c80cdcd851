/**
 * How long each main-loop answer of the benchmarks' scripted model waits before it streams
 * (STRATUS_BENCH_MODEL_THINK_MS, default 0): a real model's time to first token is hundreds of
 * ms, and work a harness does beside the request (durable writes, warming) only leaves the round
 * trip when the model takes any time. Read by the model process and printed by the benchmark.
 */
export function modelThinkMs(): number {
  return Number(process.env.STRATUS_BENCH_MODEL_THINK_MS ?? 0) || 0;
}
