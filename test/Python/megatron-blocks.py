# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# Tests the acceptance models: a GPT-2 block as HF writes it (Conv1D, fused
# q|k|v cut with split, causal-mask buffer, GELU tanh), a Llama block (RMSNorm,
# rotary embeddings, grouped-query attention with repeat_kv, SwiGLU) and a BERT
# layer (padding mask, GELU erf, post-LayerNorm), each with a 4-line Megatron
# plan on 4 simulated devices: exactly 2 all-reduces (Megatron's), and the
# sharded run matches the module's own eager output (f32, rel <= 1e-5).
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from models import (BERT_PLAN, GPT2_LM_PLAN, GPT2_PLAN, LLAMA_PLAN,  # noqa: E402
                    BertLayer, GPT2Block, GPT2LMHeadModel, LlamaDecoderLayer, bert_mask)

torch.manual_seed(0)
cases = [
    ("gpt2", GPT2Block(), (torch.randn(2, 8, 64),), GPT2_PLAN),
    ("llama", LlamaDecoderLayer(),
     (torch.randn(2, 8, 64), torch.arange(8)[None].expand(2, 8).contiguous()), LLAMA_PLAN),
    ("bert", BertLayer(), (torch.randn(2, 8, 64), bert_mask(2, 8, [8, 5])), BERT_PLAN),
    # The whole model: a vocab-parallel token embedding (one all-reduce), two
    # blocks, and the LM head tied to the embedding (vocab-split logits).
    ("gpt2-lm", GPT2LMHeadModel(), (torch.randint(0, 128, (2, 16)),), GPT2_LM_PLAN),
]
for name, module, inputs, plan in cases:
    module.eval()
    prog = tp_mlir.compile(module, inputs, mesh=tp_mlir.Mesh({"tp": 4}), plan=plan)
    totals = prog.report()["functions"][0]["totals"]
    print(name, "collectives:", ", ".join("%s x%d" % (k, v["count"])
                                         for k, v in sorted(totals.items()) if k != "all"))
    print(name, prog.verify(*inputs))
    # Inputs as numpy arrays give numpy results; torch tensors give tensors.
    out = prog(*[x.numpy() for x in inputs])
    print(name, type(out).__name__, type(prog(*inputs)).__name__)

# Grouped-query attention with fewer KV heads than devices (8 query heads, 2
# KV heads, 4 devices), the KV projections replicated as vLLM serves such
# models: Megatron's 2 all-reduces; each device slices the KV head its query
# heads share from the replicated K and V for free (all_slice), no
# all-gather.
GQA_PLAN = {"self_attn.q_proj": tp_mlir.ColwiseParallel(),
            "self_attn.o_proj": tp_mlir.RowwiseParallel(),
            "mlp.[gu]*_proj": tp_mlir.ColwiseParallel(),
            "mlp.down_proj": tp_mlir.RowwiseParallel()}
module = LlamaDecoderLayer(heads=8, kv_heads=2).eval()
inputs = cases[1][2]
prog = tp_mlir.compile(module, inputs, mesh=tp_mlir.Mesh({"tp": 4}), plan=GQA_PLAN)
totals = prog.report()["functions"][0]["totals"]
print("llama-gqa collectives:", ", ".join("%s x%d" % (k, v["count"])
                                         for k, v in sorted(totals.items()) if k != "all"))
print("llama-gqa", prog.verify(*inputs))

# Sequence parallelism (the layer norms on split tokens): reduce_scatter
# where the all_reduces were, all_gather before the column-parallel layers.
plan = dict(GPT2_PLAN, **{"ln_*": tp_mlir.SequenceParallel()})
module, inputs = cases[0][1], cases[0][2]
prog = tp_mlir.compile(module, inputs, mesh=tp_mlir.Mesh({"tp": 4}), plan=plan)
totals = prog.report()["functions"][0]["totals"]
print("gpt2-sp collectives:", ", ".join("%s x%d" % (k, v["count"])
                                       for k, v in sorted(totals.items()) if k != "all"))
print("gpt2-sp", prog.verify(*inputs))

# CHECK: gpt2 collectives: all_reduce x2
# CHECK-NEXT: gpt2 PASS
# CHECK-NEXT: gpt2 ndarray Tensor
# CHECK: llama collectives: all_reduce x2
# CHECK-NEXT: llama PASS
# CHECK: bert collectives: all_reduce x2
# CHECK-NEXT: bert PASS
# CHECK: gpt2-lm collectives: all_reduce x5
# CHECK-NEXT: gpt2-lm PASS
# CHECK: llama-gqa collectives: all_reduce x2, all_slice x2
# CHECK-NEXT: llama-gqa PASS
# CHECK: gpt2-sp collectives: all_gather x1, all_slice x1, reduce_scatter x2
# CHECK-NEXT: gpt2-sp PASS
