"""bench/gen_gpt.py's GPT stack in jax.numpy, for the benchmarks' JAX side.

Runs under a JAX interpreter (a venv of its own: see bench_jax.py), never the build's:
    python jax_gpt.py compile LAYERS BATCH SEQ EMBED HEADS DEVICES
        prints "<lower seconds> <compile seconds>" of jit(model).lower(...).compile()
    python jax_gpt.py run LAYERS BATCH SEQ EMBED HEADS DEVICES REPEAT
        prints "<best seconds>" of REPEAT runs of the compiled model on random inputs

The stack: GPT-2 blocks (layernorm, Q/K/V projections, scaled softmax attention with an
additive [S, S] mask, output projection, residual, layernorm, tanh-GELU MLP, residual) on
activations [B*S, E], unrolled (no scan, as a traced PyTorch model arrives), f32, split
Megatron-style over DEVICES forced host devices
(XLA_FLAGS=--xla_force_host_platform_device_count): Q/K/V and the first MLP weight by
columns over "tp", the output projection and the second MLP weight by rows, the rest
replicated, the output replicated.
"""

import os
import sys
import time


def main():
    mode = sys.argv[1]
    L, B, S, E, H, P = map(int, sys.argv[2:8])
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_force_host_platform_device_count=%d" % P)
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as PS

    mesh = Mesh(jax.devices()[:P], ("tp",))
    T, D, F = B * S, E // H, 4 * E

    def layernorm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    def gelu(v):
        return 0.5 * v * (1 + jnp.tanh(0.7978846 * (v + 0.044715 * v ** 3)))

    def block(x, mask, p):
        h = layernorm(x, p["ln1_g"], p["ln1_b"])
        q = (h @ p["wq"] + p["bq"]).reshape(B, S, H, D)
        k = (h @ p["wk"] + p["bk"]).reshape(B, S, H, D)
        v = (h @ p["wv"] + p["bv"]).reshape(B, S, H, D)
        s = jnp.einsum("bihd,bjhd->bhij", q, k) / jnp.sqrt(float(D)) + mask
        a = jax.nn.softmax(s, axis=-1)
        c = jnp.einsum("bhij,bjhd->bihd", a, v).reshape(T, E)
        x = x + c @ p["wo"] + p["bo"]
        h = layernorm(x, p["ln2_g"], p["ln2_b"])
        return x + gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

    def model(x, mask, layers):
        for p in layers:
            x = block(x, mask, p)
        return x

    col, row, rep = PS(None, "tp"), PS("tp", None), PS()
    spec = {"ln1_g": rep, "ln1_b": rep, "wq": col, "bq": PS("tp"), "wk": col,
            "bk": PS("tp"), "wv": col, "bv": PS("tp"), "wo": row, "bo": rep, "ln2_g": rep,
            "ln2_b": rep, "w1": col, "b1": PS("tp"), "w2": row, "b2": rep}
    shape = {"ln1_g": (E,), "ln1_b": (E,), "wq": (E, E), "bq": (E,), "wk": (E, E),
             "bk": (E,), "wv": (E, E), "bv": (E,), "wo": (E, E), "bo": (E,),
             "ln2_g": (E,), "ln2_b": (E,), "w1": (E, F), "b1": (F,), "w2": (F, E),
             "b2": (E,)}
    jitted = jax.jit(model, out_shardings=NamedSharding(mesh, rep))

    if mode == "compile":
        def struct(shp, ps):
            return jax.ShapeDtypeStruct(shp, jnp.float32, sharding=NamedSharding(mesh, ps))

        args = (struct((T, E), rep), struct((S, S), rep),
                [{n: struct(shape[n], spec[n]) for n in shape} for _ in range(L)])
        start = time.perf_counter()
        lowered = jitted.lower(*args)
        mid = time.perf_counter()
        lowered.compile()
        end = time.perf_counter()
        print("%.4f %.4f" % (mid - start, end - mid))
        return

    # mode == "run": the inputs placed on the devices by their shardings once (as
    # resident weights are), then the best of `repeat` runs, each waited for.
    repeat = int(sys.argv[8])
    keys = iter(jax.random.split(jax.random.PRNGKey(0), 2 + 16 * L))

    def put(shp, ps, scale):
        value = jax.random.uniform(next(keys), shp, jnp.float32, -scale, scale)
        return jax.device_put(value, NamedSharding(mesh, ps))

    x = put((T, E), rep, 1.0)
    mask = jax.device_put(jnp.triu(jnp.full((S, S), -1e9, jnp.float32), 1),
                          NamedSharding(mesh, rep))
    layers = [{n: put(shape[n], spec[n], 0.1) for n in shape} for _ in range(L)]
    jitted(x, mask, layers).block_until_ready()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        jitted(x, mask, layers).block_until_ready()
        best = min(best, time.perf_counter() - start)
    print("%.6f" % best)


if __name__ == "__main__":
    main()
