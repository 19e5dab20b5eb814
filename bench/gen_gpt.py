#!/usr/bin/env python3
"""Generates an N-layer GPT stack (GPT-2 blocks: layernorm, causal self-attention,
residual, layernorm, GELU MLP, residual) in tp-mlir's global form; with --bert, BERT
layers instead (post-layernorm: attention with a [B, S] key padding mask, add & norm,
GELU MLP, add & norm).

Each block is annotated the way Megatron-LM users annotate one block: the Q, K, V weights
and the first MLP weight split by columns over the mesh axis "tp"; everything else (the
output projections, biases, layernorms, activations) is left to propagation. The stack's
output is constrained replicated. Activations are [T, E] with T = batch * seq tokens; the
attention contractions are linalg.generic ops with batch and head dimensions.

With --upstream, the same model is annotated for upstream MLIR's `shard` dialect instead
(`shard.grid`, `shard.sharding`, `shard.shard ... annotate_for_users` on the same weights
and on the output), for side-by-side runs of its sharding-propagation and shard-partition.

usage: gen_gpt.py [--layers N] [--batch B] [--seq S] [--embed E] [--heads H] [--tp P]
                  [--bert] [--upstream]
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
    ap.add_argument("--no-attention", action="store_true",
                    help="layernorm + MLP + residual blocks only")
    ap.add_argument("--upstream", action="store_true",
                    help="annotate for upstream MLIR's shard dialect")
    args = ap.parse_args()
    B, S, E, H, N = args.batch, args.seq, args.embed, args.heads, args.layers
    F = args.mlp or 4 * E
    T = B * S
    out = []
    out.append("// Generated by bench/gen_gpt.py: "
               f"--layers {N} --batch {B} --seq {S} --embed {E} --heads {H} --tp {args.tp}"
               + (f" --mlp {F}" if args.mlp else "")
               + (" --no-attention" if args.no_attention else "") + (" --bert" if args.bert else "")
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
    if args.upstream:
        out.append(f"shard.grid @world(shape = {args.tp})")
    else:
        out.append(f'tp.mesh @world ["tp" = {args.tp}]')
    mask = f"tensor<{B}x{S}xf32>" if args.bert else f"tensor<{S}x{S}xf32>"
    attention = not args.no_attention
    args_txt = [f"%x: tensor<{T}x{E}xf32>"] + ([f"%mask: {mask}"] if attention else [])
    annotated = []
    for l in range(N):
        for n, ty, attr in params(l, E, F, attention):
            if args.upstream and attr:
                # The weight arrives as `<name>_arg` and is annotated in the body.
                args_txt.append(f"{n}_arg: {ty}")
                annotated.append((n, ty))
            else:
                args_txt.append(f"{n}: {ty}{attr}")
    name = "bert" if args.bert else "gpt"
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
