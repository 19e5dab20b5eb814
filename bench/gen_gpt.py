#!/usr/bin/env python3
"""Generates an N-layer GPT stack (GPT-2 blocks: layernorm, causal self-attention,
residual, layernorm, GELU MLP, residual) in tp-mlir's global form; with --bert, BERT
layers instead (post-layernorm: attention with a [B, S] key padding mask, add & norm,
GELU MLP, add & norm); with --llama, Llama layers (as Hugging Face's LlamaDecoderLayer:
RMSNorm, rotary embeddings on the queries and keys from [S, D] cos and sin inputs with
rotate-half written as slices, a negation and a concatenation, causal attention with
--kv-heads key/value heads (grouped-query attention when fewer than --heads), RMSNorm,
SwiGLU MLP, no biases).

Each block is annotated the way Megatron-LM users annotate one block: the Q, K, V weights
and the first MLP weight split by columns over the mesh axis "tp"; everything else (the
output projections, biases, layernorms, activations) is left to propagation. The stack's
output is constrained replicated. Activations are [T, E] with T = batch * seq tokens; the
attention contractions are linalg.generic ops with batch and head dimensions.

With --upstream, the same model is annotated for upstream MLIR's `shard` dialect instead
(`shard.grid`, `shard.sharding`, `shard.shard ... annotate_for_users` on the same weights
and on the output), for side-by-side runs of its sharding-propagation and shard-partition.

usage: gen_gpt.py [--layers N] [--batch B] [--seq S] [--embed E] [--heads H] [--tp P]
                  [--mlp F] [--bert | --llama [--kv-heads K]] [--upstream]
"""

import argparse


def block(l, x, B, S, E, H, F, bert=False, attention=True):
    """Emits layer l reading activation x; returns its lines and its output."""
    D = E // H
    T = B * S
    t = f"tensor<{T}x{E}xf32>"
    a = f"%l{l}_"
    lines = []
    emit = lines.append

    def layernorm(name, inp, g, b):
        emit(f"  {a}{name}_e1 = tensor.empty() : tensor<{T}xf32>")
        emit(f"  {a}{name}_z1 = linalg.fill ins(%zero : f32) outs({a}{name}_e1 : tensor<{T}xf32>) -> tensor<{T}xf32>")
        emit(f"  {a}{name}_sum = linalg.generic {{indexing_maps = [#tok_e, #tok], iterator_types = [\"parallel\", \"reduction\"]}}"
             f" ins({inp} : {t}) outs({a}{name}_z1 : tensor<{T}xf32>) {{")
        emit("    ^bb0(%v: f32, %acc: f32):")
        emit("      %s = arith.addf %v, %acc : f32")
        emit("      linalg.yield %s : f32")
        emit(f"  }} -> tensor<{T}xf32>")
        emit(f"  {a}{name}_z2 = linalg.fill ins(%zero : f32) outs({a}{name}_e1 : tensor<{T}xf32>) -> tensor<{T}xf32>")
        emit(f"  {a}{name}_sq = linalg.generic {{indexing_maps = [#tok_e, #tok, #tok], iterator_types = [\"parallel\", \"reduction\"]}}"
             f" ins({inp}, {a}{name}_sum : {t}, tensor<{T}xf32>) outs({a}{name}_z2 : tensor<{T}xf32>) {{")
        emit("    ^bb0(%v: f32, %s: f32, %acc: f32):")
        emit("      %mean = arith.mulf %s, %inv_e : f32")
        emit("      %c = arith.subf %v, %mean : f32")
        emit("      %c2 = arith.mulf %c, %c : f32")
        emit("      %r = arith.addf %c2, %acc : f32")
        emit("      linalg.yield %r : f32")
        emit(f"  }} -> tensor<{T}xf32>")
        emit(f"  {a}{name}_e2 = tensor.empty() : {t}")
        emit(f"  {a}{name} = linalg.generic {{indexing_maps = [#tok_e, #tok, #tok, #emb, #emb, #tok_e],"
             f" iterator_types = [\"parallel\", \"parallel\"]}}"
             f" ins({inp}, {a}{name}_sum, {a}{name}_sq, {g}, {b} : {t}, tensor<{T}xf32>, tensor<{T}xf32>,"
             f" tensor<{E}xf32>, tensor<{E}xf32>) outs({a}{name}_e2 : {t}) {{")
        emit("    ^bb0(%v: f32, %s: f32, %q: f32, %gv: f32, %bv: f32, %o: f32):")
        emit("      %mean = arith.mulf %s, %inv_e : f32")
        emit("      %var = arith.mulf %q, %inv_e : f32")
        emit("      %ve = arith.addf %var, %eps : f32")
        emit("      %rs = math.rsqrt %ve : f32")
        emit("      %c = arith.subf %v, %mean : f32")
        emit("      %n = arith.mulf %c, %rs : f32")
        emit("      %sc = arith.mulf %n, %gv : f32")
        emit("      %r = arith.addf %sc, %bv : f32")
        emit("      linalg.yield %r : f32")
        emit(f"  }} -> {t}")

    def linear(name, inp, w, bias, n, k):
        emit(f"  {a}{name}_e = tensor.empty() : tensor<{T}x{n}xf32>")
        emit(f"  {a}{name}_z = linalg.fill ins(%zero : f32) outs({a}{name}_e : tensor<{T}x{n}xf32>) -> tensor<{T}x{n}xf32>")
        emit(f"  {a}{name}_mm = linalg.matmul ins({inp}, {w} : tensor<{T}x{k}xf32>, tensor<{k}x{n}xf32>)"
             f" outs({a}{name}_z : tensor<{T}x{n}xf32>) -> tensor<{T}x{n}xf32>")
        emit(f"  {a}{name} = linalg.generic {{indexing_maps = [#tok_e, #emb, #tok_e], iterator_types = [\"parallel\", \"parallel\"]}}"
             f" ins({a}{name}_mm, {bias} : tensor<{T}x{n}xf32>, tensor<{n}xf32>) outs({a}{name}_e : tensor<{T}x{n}xf32>) {{")
        emit("    ^bb0(%v: f32, %bv: f32, %o: f32):")
        emit("      %r = arith.addf %v, %bv : f32")
        emit("      linalg.yield %r : f32")
        emit(f"  }} -> tensor<{T}x{n}xf32>")

    def residual(name, p, q):
        emit(f"  {a}{name}_e = tensor.empty() : {t}")
        emit(f"  {a}{name} = linalg.add ins({p}, {q} : {t}, {t}) outs({a}{name}_e : {t}) -> {t}")

    def gelu():
        ft = f"tensor<{T}x{F}xf32>"
        emit(f"  {a}ge = tensor.empty() : {ft}")
        emit(f"  {a}g = linalg.generic {{indexing_maps = [#tok_e, #tok_e], iterator_types = [\"parallel\", \"parallel\"]}}"
             f" ins({a}fc : {ft}) outs({a}ge : {ft}) {{")
        emit("    ^bb0(%v: f32, %o: f32):")
        emit("      %v2 = arith.mulf %v, %v : f32")
        emit("      %v3 = arith.mulf %v2, %v : f32")
        emit("      %i1 = arith.mulf %v3, %gelu_c : f32")
        emit("      %i2 = arith.addf %v, %i1 : f32")
        emit("      %i3 = arith.mulf %i2, %gelu_k : f32")
        emit("      %th = math.tanh %i3 : f32")
        emit("      %t1 = arith.addf %th, %one : f32")
        emit("      %hv = arith.mulf %v, %half : f32")
        emit("      %r = arith.mulf %hv, %t1 : f32")
        emit("      linalg.yield %r : f32")
        emit(f"  }} -> {ft}")

    if not attention:
        # Layernorm + MLP + residual only (what upstream's shard dialect can run).
        layernorm("ln2", x, f"{a}ln2_g", f"{a}ln2_b")
        linear("fc", f"{a}ln2", f"{a}w1", f"{a}b1", F, E)
        gelu()
        linear("proj", f"{a}g", f"{a}w2", f"{a}b2", E, F)
        residual("out", x, f"{a}proj")
        return lines, f"{a}out"
    # GPT-2 normalizes before each sublayer; BERT after each residual.
    attn_in = x if bert else f"{a}ln1"
    if not bert:
        layernorm("ln1", x, f"{a}ln1_g", f"{a}ln1_b")
    for p in "qkv":
        linear(p, attn_in, f"{a}w{p}", f"{a}b{p}", E, E)
        emit(f"  {a}{p}4 = tensor.expand_shape {a}{p} [[0, 1], [2, 3]] output_shape [{B}, {S}, {H}, {D}]"
             f" : tensor<{T}x{E}xf32> into tensor<{B}x{S}x{H}x{D}xf32>")
    sc = f"tensor<{B}x{H}x{S}x{S}xf32>"
    emit(f"  {a}se = tensor.empty() : {sc}")
    emit(f"  {a}sz = linalg.fill ins(%zero : f32) outs({a}se : {sc}) -> {sc}")
    emit(f"  {a}s = linalg.generic {{indexing_maps = [#att_q, #att_k, #att_s], iterator_types ="
         f" [\"parallel\", \"parallel\", \"parallel\", \"parallel\", \"reduction\"]}}"
         f" ins({a}q4, {a}k4 : tensor<{B}x{S}x{H}x{D}xf32>, tensor<{B}x{S}x{H}x{D}xf32>) outs({a}sz : {sc}) {{")
    emit("    ^bb0(%p: f32, %q: f32, %acc: f32):")
    emit("      %m = arith.mulf %p, %q : f32")
    emit("      %r = arith.addf %acc, %m : f32")
    emit("      linalg.yield %r : f32")
    emit(f"  }} -> {sc}")
    # Scale and mask: GPT-2's causal [S, S] mask added to every batch and head;
    # BERT's [B, S] key padding mask added to every head and query.
    mask_map, mask_type = ("#bj", f"tensor<{B}x{S}xf32>") if bert else ("#ij", f"tensor<{S}x{S}xf32>")
    emit(f"  {a}sm = linalg.generic {{indexing_maps = [#bhij, {mask_map}, #bhij], iterator_types ="
         f" [\"parallel\", \"parallel\", \"parallel\", \"parallel\"]}}"
         f" ins({a}s, %mask : {sc}, {mask_type}) outs({a}se : {sc}) {{")
    emit("    ^bb0(%v: f32, %mv: f32, %o: f32):")
    emit("      %sv = arith.mulf %v, %scale : f32")
    emit("      %r = arith.addf %sv, %mv : f32")
    emit("      linalg.yield %r : f32")
    emit(f"  }} -> {sc}")
    emit(f"  {a}p = linalg.softmax dimension(3) ins({a}sm : {sc}) outs({a}se : {sc}) -> {sc}")
    ct = f"tensor<{B}x{S}x{H}x{D}xf32>"
    emit(f"  {a}ce = tensor.empty() : {ct}")
    emit(f"  {a}cz = linalg.fill ins(%zero : f32) outs({a}ce : {ct}) -> {ct}")
    emit(f"  {a}c = linalg.generic {{indexing_maps = [#ctx_p, #ctx_v, #ctx_c], iterator_types ="
         f" [\"parallel\", \"parallel\", \"parallel\", \"parallel\", \"reduction\"]}}"
         f" ins({a}p, {a}v4 : {sc}, {ct}) outs({a}cz : {ct}) {{")
    emit("    ^bb0(%p: f32, %q: f32, %acc: f32):")
    emit("      %m = arith.mulf %p, %q : f32")
    emit("      %r = arith.addf %acc, %m : f32")
    emit("      linalg.yield %r : f32")
    emit(f"  }} -> {ct}")
    emit(f"  {a}c2 = tensor.collapse_shape {a}c [[0, 1], [2, 3]] : {ct} into {t}")
    linear("o", f"{a}c2", f"{a}wo", f"{a}bo", E, E)
    residual("r1", x, f"{a}o")
    if bert:
        layernorm("ln1", f"{a}r1", f"{a}ln1_g", f"{a}ln1_b")
        mlp_in = f"{a}ln1"
    else:
        layernorm("ln2", f"{a}r1", f"{a}ln2_g", f"{a}ln2_b")
        mlp_in = f"{a}ln2"
    linear("fc", mlp_in, f"{a}w1", f"{a}b1", F, E)
    gelu()
    linear("proj", f"{a}g", f"{a}w2", f"{a}b2", E, F)
    if bert:
        residual("r2", mlp_in, f"{a}proj")
        layernorm("ln2", f"{a}r2", f"{a}ln2_g", f"{a}ln2_b")
        return lines, f"{a}ln2"
    residual("out", f"{a}r1", f"{a}proj")
    return lines, f"{a}out"


def llama_block(l, x, B, S, E, H, KV, F):
    """Emits Llama layer l reading activation x; returns its lines and its output."""
    D = E // H
    G = H // KV
    T = B * S
    t = f"tensor<{T}x{E}xf32>"
    a = f"%l{l}_"
    lines = []
    emit = lines.append

    def generic(name, maps, iterators, ins, outs, args, body, result):
        emit(f"  {a}{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types ="
             f" [{', '.join(chr(34) + i + chr(34) for i in iterators)}]}}"
             f" ins({', '.join(v for v, _ in ins)} : {', '.join(ty for _, ty in ins)})"
             f" outs({outs[0]} : {outs[1]}) {{")
        emit(f"    ^bb0({', '.join(arg + ': f32' for arg in args)}):")
        for op in body:
            emit(f"      {op}")
        emit(f"  }} -> {result}")

    def rmsnorm(name, inp, g):
        emit(f"  {a}{name}_e1 = tensor.empty() : tensor<{T}xf32>")
        emit(f"  {a}{name}_z = linalg.fill ins(%zero : f32) outs({a}{name}_e1 : tensor<{T}xf32>) -> tensor<{T}xf32>")
        generic(f"{name}_sq", ["#tok_e", "#tok"], ["parallel", "reduction"], [(inp, t)],
                (f"{a}{name}_z", f"tensor<{T}xf32>"), ["%v", "%acc"],
                ["%v2 = arith.mulf %v, %v : f32", "%r = arith.addf %v2, %acc : f32",
                 "linalg.yield %r : f32"], f"tensor<{T}xf32>")
        emit(f"  {a}{name}_e2 = tensor.empty() : {t}")
        generic(name, ["#tok_e", "#tok", "#emb", "#tok_e"], ["parallel", "parallel"],
                [(inp, t), (f"{a}{name}_sq", f"tensor<{T}xf32>"), (g, f"tensor<{E}xf32>")],
                (f"{a}{name}_e2", t), ["%v", "%q", "%gv", "%o"],
                ["%ms = arith.mulf %q, %inv_e : f32", "%me = arith.addf %ms, %eps : f32",
                 "%rs = math.rsqrt %me : f32", "%n = arith.mulf %v, %rs : f32",
                 "%r = arith.mulf %n, %gv : f32", "linalg.yield %r : f32"], t)

    def linear(name, inp, w, n, k):
        emit(f"  {a}{name}_e = tensor.empty() : tensor<{T}x{n}xf32>")
        emit(f"  {a}{name}_z = linalg.fill ins(%zero : f32) outs({a}{name}_e : tensor<{T}x{n}xf32>) -> tensor<{T}x{n}xf32>")
        emit(f"  {a}{name} = linalg.matmul ins({inp}, {w} : tensor<{T}x{k}xf32>, tensor<{k}x{n}xf32>)"
             f" outs({a}{name}_z : tensor<{T}x{n}xf32>) -> tensor<{T}x{n}xf32>")

    def residual(name, p, q):
        emit(f"  {a}{name}_e = tensor.empty() : {t}")
        emit(f"  {a}{name} = linalg.add ins({p}, {q} : {t}, {t}) outs({a}{name}_e : {t}) -> {t}")

    # Queries [B, S, KV, G, D] (G = 1: [B, S, H, D]), keys and values [B, S, KV, D].
    qshape = [B, S, KV, G, D] if G > 1 else [B, S, H, D]
    kshape = [B, S, KV, D]
    ty = lambda shape: "tensor<" + "x".join(map(str, shape)) + "xf32>"

    def rotary(name, inp, shape):
        # x * cos + rotate_half(x) * sin; rotate_half(x) = concat(-x[..., D/2:], x[..., :D/2]).
        r = len(shape)
        half = shape[:-1] + [D // 2]
        zeros = ", ".join(["0"] * r)
        ones = ", ".join(["1"] * r)
        sizes = ", ".join(map(str, half))
        emit(f"  {a}{name}_lo = tensor.extract_slice {inp}[{zeros}] [{sizes}] [{ones}] : {ty(shape)} to {ty(half)}")
        emit(f"  {a}{name}_hi = tensor.extract_slice {inp}[{', '.join(['0'] * (r - 1))}, {D // 2}] [{sizes}] [{ones}]"
             f" : {ty(shape)} to {ty(half)}")
        emit(f"  {a}{name}_neg = arith.negf {a}{name}_hi : {ty(half)}")
        emit(f"  {a}{name}_rh = tensor.concat dim({r - 1}) {a}{name}_neg, {a}{name}_lo"
             f" : ({ty(half)}, {ty(half)}) -> {ty(shape)}")
        emit(f"  {a}{name}_e = tensor.empty() : {ty(shape)}")
        ident, sd = f"#rot{r}", f"#rot{r}_sd"
        generic(name, [ident, ident, sd, sd, ident], ["parallel"] * r,
                [(inp, ty(shape)), (f"{a}{name}_rh", ty(shape)), ("%cos", f"tensor<{S}x{D}xf32>"),
                 ("%sin", f"tensor<{S}x{D}xf32>")], (f"{a}{name}_e", ty(shape)),
                ["%v", "%h", "%c", "%s", "%o"],
                ["%vc = arith.mulf %v, %c : f32", "%hs = arith.mulf %h, %s : f32",
                 "%r = arith.addf %vc, %hs : f32", "linalg.yield %r : f32"], ty(shape))

    rmsnorm("ln1", x, f"{a}ln1_g")
    linear("q", f"{a}ln1", f"{a}wq", E, E)
    linear("k", f"{a}ln1", f"{a}wk", KV * D, E)
    linear("v", f"{a}ln1", f"{a}wv", KV * D, E)
    qgroups = "[[0, 1], [2, 3, 4]]" if G > 1 else "[[0, 1], [2, 3]]"
    emit(f"  {a}q4 = tensor.expand_shape {a}q {qgroups} output_shape [{', '.join(map(str, qshape))}]"
         f" : tensor<{T}x{E}xf32> into {ty(qshape)}")
    for p in "kv":
        emit(f"  {a}{p}4 = tensor.expand_shape {a}{p} [[0, 1], [2, 3]] output_shape [{', '.join(map(str, kshape))}]"
             f" : tensor<{T}x{KV * D}xf32> into {ty(kshape)}")
    rotary("qr", f"{a}q4", qshape)
    rotary("kr", f"{a}k4", kshape)
    # Scores [B, KV, G, S, S] (G = 1: [B, H, S, S]), scaled, the causal mask added.
    sshape = [B, KV, G, S, S] if G > 1 else [B, H, S, S]
    sc = ty(sshape)
    g = "_g" if G > 1 else ""
    par = ["parallel"] * len(sshape)
    emit(f"  {a}se = tensor.empty() : {sc}")
    emit(f"  {a}sz = linalg.fill ins(%zero : f32) outs({a}se : {sc}) -> {sc}")
    generic("s", [f"#att{g}_q", f"#att{g}_k", f"#att{g}_s"], par + ["reduction"],
            [(f"{a}qr", ty(qshape)), (f"{a}kr", ty(kshape))], (f"{a}sz", sc), ["%p", "%q", "%acc"],
            ["%m = arith.mulf %p, %q : f32", "%r = arith.addf %acc, %m : f32",
             "linalg.yield %r : f32"], sc)
    generic("sm", [f"#all{g}", f"#ij{g}", f"#all{g}"], par, [(f"{a}s", sc), ("%mask", f"tensor<{S}x{S}xf32>")],
            (f"{a}se", sc), ["%v", "%mv", "%o"],
            ["%sv = arith.mulf %v, %scale : f32", "%r = arith.addf %sv, %mv : f32",
             "linalg.yield %r : f32"], sc)
    emit(f"  {a}p = linalg.softmax dimension({len(sshape) - 1}) ins({a}sm : {sc}) outs({a}se : {sc}) -> {sc}")
    emit(f"  {a}ce = tensor.empty() : {ty(qshape)}")
    emit(f"  {a}cz = linalg.fill ins(%zero : f32) outs({a}ce : {ty(qshape)}) -> {ty(qshape)}")
    generic("c", [f"#ctx{g}_p", f"#ctx{g}_v", f"#ctx{g}_c"], par + ["reduction"],
            [(f"{a}p", sc), (f"{a}v4", ty(kshape))], (f"{a}cz", ty(qshape)), ["%p", "%q", "%acc"],
            ["%m = arith.mulf %p, %q : f32", "%r = arith.addf %acc, %m : f32",
             "linalg.yield %r : f32"], ty(qshape))
    emit(f"  {a}c2 = tensor.collapse_shape {a}c {qgroups} : {ty(qshape)} into {t}")
    linear("o", f"{a}c2", f"{a}wo", E, E)
    residual("r1", x, f"{a}o")
    rmsnorm("ln2", f"{a}r1", f"{a}ln2_g")
    linear("gate", f"{a}ln2", f"{a}wg", F, E)
    linear("up", f"{a}ln2", f"{a}wu", F, E)
    ft = f"tensor<{T}x{F}xf32>"
    emit(f"  {a}he = tensor.empty() : {ft}")
    generic("h", ["#tok_e", "#tok_e", "#tok_e"], ["parallel", "parallel"],
            [(f"{a}gate", ft), (f"{a}up", ft)], (f"{a}he", ft), ["%gv", "%uv", "%o"],
            ["%ng = arith.negf %gv : f32", "%ex = math.exp %ng : f32",
             "%den = arith.addf %ex, %one : f32", "%sg = arith.divf %gv, %den : f32",
             "%r = arith.mulf %sg, %uv : f32", "linalg.yield %r : f32"], ft)
    linear("down", f"{a}h", f"{a}wd", E, F)
    residual("out", f"{a}r1", f"{a}down")
    return lines, f"{a}out"


def llama_params(l, E, KVD, F):
    a = f"%l{l}_"
    col = ' {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}'
    return [(f"{a}ln1_g", f"tensor<{E}xf32>", ""), (f"{a}wq", f"tensor<{E}x{E}xf32>", col),
            (f"{a}wk", f"tensor<{E}x{KVD}xf32>", col), (f"{a}wv", f"tensor<{E}x{KVD}xf32>", col),
            (f"{a}wo", f"tensor<{E}x{E}xf32>", ""), (f"{a}ln2_g", f"tensor<{E}xf32>", ""),
            (f"{a}wg", f"tensor<{E}x{F}xf32>", col), (f"{a}wu", f"tensor<{E}x{F}xf32>", col),
            (f"{a}wd", f"tensor<{F}x{E}xf32>", "")]


def params(l, E, F, attention=True):
    a = f"%l{l}_"
    col = '{tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>}'
    if not attention:
        return [(f"{a}ln2_g", f"tensor<{E}xf32>", ""), (f"{a}ln2_b", f"tensor<{E}xf32>", ""),
                (f"{a}w1", f"tensor<{E}x{F}xf32>", " " + col), (f"{a}b1", f"tensor<{F}xf32>", ""),
                (f"{a}w2", f"tensor<{F}x{E}xf32>", ""), (f"{a}b2", f"tensor<{E}xf32>", "")]
    ps = [(f"{a}ln1_g", f"tensor<{E}xf32>", ""), (f"{a}ln1_b", f"tensor<{E}xf32>", "")]
    for p in "qkv":
        ps += [(f"{a}w{p}", f"tensor<{E}x{E}xf32>", " " + col), (f"{a}b{p}", f"tensor<{E}xf32>", "")]
    ps += [(f"{a}wo", f"tensor<{E}x{E}xf32>", ""), (f"{a}bo", f"tensor<{E}xf32>", ""),
           (f"{a}ln2_g", f"tensor<{E}xf32>", ""), (f"{a}ln2_b", f"tensor<{E}xf32>", ""),
           (f"{a}w1", f"tensor<{E}x{F}xf32>", " " + col), (f"{a}b1", f"tensor<{F}xf32>", ""),
           (f"{a}w2", f"tensor<{F}x{E}xf32>", ""), (f"{a}b2", f"tensor<{E}xf32>", "")]
    return ps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--embed", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--mlp", type=int, default=0,
                    help="MLP width (default 4 x embed; 11008 for a Llama-7B-sized layer)")
    ap.add_argument("--bert", action="store_true")
    ap.add_argument("--llama", action="store_true",
                    help="Llama layers (RMSNorm, rotary embeddings, SwiGLU, no biases)")
    ap.add_argument("--kv-heads", type=int, default=0,
                    help="key/value heads of --llama's attention (default: --heads)")
    ap.add_argument("--no-attention", action="store_true",
                    help="layernorm + MLP + residual blocks only")
    ap.add_argument("--upstream", action="store_true",
                    help="annotate for upstream MLIR's shard dialect")
    args = ap.parse_args()
    B, S, E, H, N = args.batch, args.seq, args.embed, args.heads, args.layers
    F = args.mlp or 4 * E
    T = B * S
    KV = args.kv_heads or H
    if args.llama and (args.bert or args.no_attention or args.upstream):
        ap.error("--llama takes none of --bert, --no-attention, --upstream")
    if args.kv_heads and not args.llama:
        ap.error("--kv-heads is for --llama")
    if H % KV or E % H or (args.llama and (E // H) % 2):
        ap.error(f"--heads {H} must be a multiple of --kv-heads {KV} and divide --embed {E}"
                 " (into an even head dimension for --llama)")
    out = []
    out.append("// Generated by bench/gen_gpt.py: "
               f"--layers {N} --batch {B} --seq {S} --embed {E} --heads {H} --tp {args.tp}"
               + (f" --mlp {F}" if args.mlp else "")
               + (" --no-attention" if args.no_attention else "") + (" --bert" if args.bert else "")
               + (" --llama" if args.llama else "") + (f" --kv-heads {KV}" if args.kv_heads else "")
               + (" --upstream" if args.upstream else ""))
    out.append("#tok_e = affine_map<(t, e) -> (t, e)>")
    out.append("#tok = affine_map<(t, e) -> (t)>")
    out.append("#emb = affine_map<(t, e) -> (e)>")
    out.append("#att_q = affine_map<(b, h, i, j, d) -> (b, i, h, d)>")
    out.append("#att_k = affine_map<(b, h, i, j, d) -> (b, j, h, d)>")
    out.append("#att_s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>")
    out.append("#bhij = affine_map<(b, h, i, j) -> (b, h, i, j)>")
    out.append("#ij = affine_map<(b, h, i, j) -> (i, j)>")
    out.append("#bj = affine_map<(b, h, i, j) -> (b, j)>")
    out.append("#ctx_p = affine_map<(b, i, h, d, j) -> (b, h, i, j)>")
    out.append("#ctx_v = affine_map<(b, i, h, d, j) -> (b, j, h, d)>")
    out.append("#ctx_c = affine_map<(b, i, h, d, j) -> (b, i, h, d)>")
    if args.llama:
        out.append("#all = affine_map<(b, h, i, j) -> (b, h, i, j)>")
        for r, dims in ((4, "b, s, h, d"), (5, "b, s, h, g, d")):
            out.append(f"#rot{r} = affine_map<({dims}) -> ({dims})>")
            out.append(f"#rot{r}_sd = affine_map<({dims}) -> (s, d)>")
        # Grouped-query attention: G query heads per key/value head.
        out.append("#att_g_q = affine_map<(b, h, g, i, j, d) -> (b, i, h, g, d)>")
        out.append("#att_g_k = affine_map<(b, h, g, i, j, d) -> (b, j, h, d)>")
        out.append("#att_g_s = affine_map<(b, h, g, i, j, d) -> (b, h, g, i, j)>")
        out.append("#all_g = affine_map<(b, h, g, i, j) -> (b, h, g, i, j)>")
        out.append("#ij_g = affine_map<(b, h, g, i, j) -> (i, j)>")
        out.append("#ctx_g_p = affine_map<(b, i, h, g, d, j) -> (b, h, g, i, j)>")
        out.append("#ctx_g_v = affine_map<(b, i, h, g, d, j) -> (b, j, h, d)>")
        out.append("#ctx_g_c = affine_map<(b, i, h, g, d, j) -> (b, i, h, g, d)>")
    if args.upstream:
        out.append(f"shard.grid @world(shape = {args.tp})")
    else:
        out.append(f'tp.mesh @world ["tp" = {args.tp}]')
    mask = f"tensor<{B}x{S}xf32>" if args.bert else f"tensor<{S}x{S}xf32>"
    attention = not args.no_attention
    args_txt = [f"%x: tensor<{T}x{E}xf32>"] + ([f"%mask: {mask}"] if attention else [])
    if args.llama:
        D = E // H
        args_txt += [f"%cos: tensor<{S}x{D}xf32>", f"%sin: tensor<{S}x{D}xf32>"]
    annotated = []
    for l in range(N):
        layer = llama_params(l, E, KV * (E // H), F) if args.llama else params(l, E, F, attention)
        for n, ty, attr in layer:
            if args.upstream and attr:
                # The weight arrives as `<name>_arg` and is annotated in the body.
                args_txt.append(f"{n}_arg: {ty}")
                annotated.append((n, ty))
            else:
                args_txt.append(f"{n}: {ty}{attr}")
    name = "bert" if args.bert else "llama" if args.llama else "gpt"
    out.append(f"func.func @{name}(" + ",\n    ".join(args_txt) + ")")
    if args.upstream:
        out.append(f"    -> tensor<{T}x{E}xf32> {{")
        out.append("  %col = shard.sharding @world split_axes = [[], [0]] : !shard.sharding")
        out.append("  %rep = shard.sharding @world split_axes = [[], []] : !shard.sharding")
        for n, ty in annotated:
            out.append(f"  {n} = shard.shard {n}_arg to %col annotate_for_users : {ty}")
    else:
        out.append(f'    -> (tensor<{T}x{E}xf32> {{tp.sharding = #tp.sharding<@world, [{{}}, {{}}]>}}) {{')
    out.append("  %zero = arith.constant 0.0 : f32")
    out.append("  %one = arith.constant 1.0 : f32")
    out.append("  %half = arith.constant 0.5 : f32")
    out.append(f"  %inv_e = arith.constant {1.0 / E!r} : f32")
    out.append("  %eps = arith.constant 1.0e-05 : f32")
    if attention:  # the scores' scale; MLP-only stacks would not use it
        out.append(f"  %scale = arith.constant {1.0 / (E // H) ** 0.5!r} : f32")
    out.append("  %gelu_c = arith.constant 0.044715 : f32")
    out.append("  %gelu_k = arith.constant 0.7978846 : f32")
    x = "%x"
    for l in range(N):
        if args.llama:
            lines, x = llama_block(l, x, B, S, E, H, KV, F)
        else:
            lines, x = block(l, x, B, S, E, H, F, args.bert, attention)
        out += lines
    if args.upstream:
        out.append(f"  %result = shard.shard {x} to %rep : tensor<{T}x{E}xf32>")
        x = "%result"
    out.append(f"  return {x} : tensor<{T}x{E}xf32>")
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
