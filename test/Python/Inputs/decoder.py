"""A GPT-2-style decoder over a KV cache, for the decode-loop tests
(decode.py, decode-cuda.py): `tokens` at positions pos .. pos + t - 1, the
cache written at those positions with index_copy, the last position's logits
and the caches returned; and the plan that splits it Megatron-style over "tp"
with the cache by heads, donated to the outputs that return it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from tp_mlir import ColwiseParallel, RowwiseParallel, Shard


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, index, k_cache, v_cache, mask):
        b, t, d = x.shape
        h = self.heads
        y = self.ln_1(x)
        q = self.q(y).view(b, t, h, d // h).transpose(1, 2)
        k = self.k(y).view(b, t, h, d // h).transpose(1, 2)
        v = self.v(y).view(b, t, h, d // h).transpose(1, 2)
        # This step's keys and values written at their positions.
        k_cache = k_cache.index_copy(2, index, k)
        v_cache = v_cache.index_copy(2, index, v)
        s = (q @ k_cache.transpose(-1, -2) / (d // h) ** 0.5).masked_fill(mask, -1e4)
        a = torch.softmax(s, -1) @ v_cache
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)))), k_cache, v_cache


class Decoder(nn.Module):
    """`tokens` (batch x t) at positions pos .. pos + t - 1 over a cache of
    `length` positions; returns the last position's logits and the caches."""

    def __init__(self, vocab=64, d=32, heads=4, length=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(length, d)
        self.blocks = nn.ModuleList([Block(d, heads), Block(d, heads)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("positions", torch.arange(length))

    def forward(self, tokens, pos, k0, v0, k1, v1):
        index = pos + self.positions[:tokens.shape[1]]
        x = self.wte(tokens) + self.wpe(index)
        # Query i (at position pos + i) sees the cache up to its position.
        mask = self.positions.view(1, -1) > index.view(-1, 1)
        x, k0, v0 = self.blocks[0](x, index, k0, v0, mask)
        x, k1, v1 = self.blocks[1](x, index, k1, v1, mask)
        return self.head(self.ln_f(x))[:, -1], k0, v0, k1, v1


CACHES = ("k0", "v0", "k1", "v1")


def plan():
    p = {"blocks.%d.%s" % (i, n): ColwiseParallel() for i in range(2) for n in ("q", "k", "v", "fc")}
    p.update({"blocks.%d.%s" % (i, n): RowwiseParallel() for i in range(2) for n in ("o", "proj")})
    p.update({name: Shard(1) for name in CACHES})
    return p


# Each cache input is written in place of the output that returns it.
DONATE = {name: i + 1 for i, name in enumerate(CACHES)}
