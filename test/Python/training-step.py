# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# Tests compile(..., backward=True): the training step (loss and every
# parameter's gradient, laid out as its parameter, and the block input's
# gradient as a layer inside a stack needs it) of the GPT-2, Llama and BERT
# blocks with their 4-line Megatron plans on 4 simulated devices gets
# Megatron's 4 all-reduces (2 forward, 2 backward), and every gradient
# matches eager autograd (f32, rel <= 1e-5).
#
# BERT (post-LayerNorm, separate q/k/v layers): 2 forward + 1 backward
# all-reduces without the input gradient (nothing else needs the gradient at
# the q/k/v inputs); with it, Megatron's 4: the three partial input gradients
# are added up before they meet the residual's gradient (the importer sums
# matmul results first), so they are reduced once.
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from models import (BERT_PLAN, GPT2_PLAN, LLAMA_PLAN, BertLayer, GPT2Block,  # noqa: E402
                    LlamaDecoderLayer, bert_mask)

torch.manual_seed(0)
x = torch.randn(2, 8, 64)
target = torch.randn(2, 8, 64)


def loss(output, target):
    return (output * target).sum()


cases = [
    ("gpt2", GPT2Block(), (x,), GPT2_PLAN, ("hidden_states",)),
    ("llama", LlamaDecoderLayer(), (x, torch.arange(8)[None].expand(2, 8).contiguous()),
     LLAMA_PLAN, ("hidden_states",)),
    ("bert", BertLayer(), (x, bert_mask(2, 8, [8, 5])), BERT_PLAN, ()),
    ("bert+dx", BertLayer(), (x, bert_mask(2, 8, [8, 5])), BERT_PLAN, ("hidden_states",)),
]
for name, module, inputs, plan, grad_inputs in cases:
    module.eval()
    prog = tp_mlir.compile(module, inputs, mesh=tp_mlir.Mesh({"tp": 4}), plan=plan,
                           backward=True, loss=loss, targets=(target,),
                           grad_inputs=grad_inputs)
    totals = prog.report()["functions"][0]["totals"]
    print(name, "collectives:", ", ".join("%s x%d" % (k, v["count"])
                                         for k, v in sorted(totals.items()) if k != "all"))
    print(name, prog.verify(*inputs, target))
    results = prog(*inputs, target)
    params = dict(module.named_parameters())
    print(name, "results:", len(results), "shapes match:",
          all(tuple(r.shape) == tuple(params[s.name[5:]].shape)
              for r, s in zip(results[1:], prog._loaded.results[1:]) if s.name[5:] in params))

# CHECK: gpt2 collectives: all_reduce x4
# CHECK-NEXT: gpt2 PASS
# CHECK-NEXT: gpt2 results: 14 shapes match: True
# CHECK: llama collectives: all_reduce x4
# CHECK-NEXT: llama PASS
# CHECK-NEXT: llama results: 11 shapes match: True
# CHECK: bert collectives: all_reduce x3
# CHECK-NEXT: bert PASS
# CHECK: bert+dx collectives: all_reduce x4
# CHECK-NEXT: bert+dx PASS
