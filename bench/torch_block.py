"""PyTorch's time for the blocks of scripts/gpu-check.sh, on one GPU.

The peer of `tp-run --backend cuda` in the GPU check: the GPT-2-small block
(d 768, 12 heads, seq 128, batch 4, f32; bench/gen_gpt.py's layernorm, causal
self-attention, GELU(tanh) MLP, residuals) and the Llama-7B-sized layer (d 4096,
32 heads, MLP 11008, seq 2048, bf16; bench/gen_gpt.py --llama's RMSNorm, rotary
embeddings, causal attention through scaled_dot_product_attention as Hugging
Face's Llama runs it by default, RMSNorm, SwiGLU), in PyTorch eager, and with
torch.compile where it is available (default mode, and "reduce-overhead", which
replays CUDA graphs: the peer of tp-run's graphed runs), timed with CUDA events
(best of 20 after warm-up). Prints one line per block and mode, then the ceilings that
`tp-run --profile`'s device times are held against: cuBLAS alone (torch.matmul)
on each block's GEMM shapes on one rank, in TFLOP/s, and a device-to-device
copy's bandwidth, in GB/s (read + write).

`--check` runs the blocks once on the CPU, small, and prints their output
shapes: what can be checked without a GPU.
"""
import math
import sys


def main():
    try:
        import torch
    except ImportError:
        print("torch_block: no PyTorch here")
        return 1
    class Block(torch.nn.Module):
        def __init__(self, embed, heads, mlp):
            super().__init__()
            self.heads = heads
            self.ln1 = torch.nn.LayerNorm(embed)
            self.qkv = torch.nn.Linear(embed, 3 * embed)
            self.proj = torch.nn.Linear(embed, embed)
            self.ln2 = torch.nn.LayerNorm(embed)
            self.fc = torch.nn.Linear(embed, mlp)
            self.out = torch.nn.Linear(mlp, embed)

        def forward(self, x):
            b, s, e = x.shape
            h = self.heads
            q, k, v = self.qkv(self.ln1(x)).split(e, dim=-1)
            q, k, v = (t.view(b, s, h, e // h).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-1, -2) / math.sqrt(e // h)
            mask = torch.triu(torch.ones(s, s, device=x.device, dtype=torch.bool), 1)
            scores = scores.masked_fill(mask, float("-inf"))
            a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, e)
            x = x + self.proj(a)
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)),
                                                         approximate="tanh"))

    class LlamaBlock(torch.nn.Module):
        def __init__(self, embed, heads, mlp, seq):
            super().__init__()
            self.heads = heads
            d = embed // heads
            self.ln1 = torch.nn.Parameter(torch.ones(embed))
            self.ln2 = torch.nn.Parameter(torch.ones(embed))
            self.q, self.k, self.v, self.o = (
                torch.nn.Linear(embed, embed, bias=False) for _ in range(4))
            self.gate = torch.nn.Linear(embed, mlp, bias=False)
            self.up = torch.nn.Linear(embed, mlp, bias=False)
            self.down = torch.nn.Linear(mlp, embed, bias=False)
            inv = 1.0 / 10000 ** (torch.arange(0, d, 2).float() / d)
            angles = torch.outer(torch.arange(seq).float(), inv)
            angles = torch.cat((angles, angles), dim=-1)
            self.register_buffer("cos", angles.cos())
            self.register_buffer("sin", angles.sin())

        @staticmethod
        def rms(x, g):
            v = x.float().pow(2).mean(-1, keepdim=True)
            return g * (x.float() * torch.rsqrt(v + 1e-5)).to(x.dtype)

        def rotate(self, t):
            half = t.shape[-1] // 2
            rotated = torch.cat((-t[..., half:], t[..., :half]), dim=-1)
            return t * self.cos.to(t.dtype) + rotated * self.sin.to(t.dtype)

        def forward(self, x):
            b, s, e = x.shape
            h = self.heads
            n = self.rms(x, self.ln1)
            q, k, v = (p(n).view(b, s, h, e // h).transpose(1, 2)
                       for p in (self.q, self.k, self.v))
            q, k = self.rotate(q), self.rotate(k)
            sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
            if sdpa:
                a = sdpa(q, k, v, is_causal=True)
            else:  # PyTorch 1.x (Debian 12's, for --check)
                scores = q @ k.transpose(-1, -2) / math.sqrt(e // h)
                mask = torch.triu(torch.ones(s, s, dtype=torch.bool), 1)
                a = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
            x = x + self.o(a.transpose(1, 2).reshape(b, s, e))
            n = self.rms(x, self.ln2)
            return x + self.down(torch.nn.functional.silu(self.gate(n)) * self.up(n))

    if "--check" in sys.argv:
        for block in (Block(64, 4, 256), LlamaBlock(64, 4, 172, 8)):
            print(type(block).__name__, tuple(block(torch.randn(2, 8, 64)).shape))
        return 0
    if not torch.cuda.is_available():
        print("torch_block: PyTorch sees no GPU")
        return 1
    dev = torch.device("cuda")

    def timed(fn, x, reps=20):
        with torch.no_grad():
            for _ in range(3):
                fn(x)
            torch.cuda.synchronize()
            best = float("inf")
            for _ in range(reps):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                fn(x)
                end.record()
                torch.cuda.synchronize()
                best = min(best, start.elapsed_time(end))
        return best

    configs = [("gpt2-small block f32", 4, 128, 768, 12, 3072, torch.float32),
               ("llama7b-sized layer bf16", 1, 2048, 4096, 32, 11008, torch.bfloat16)]
    for name, batch, seq, embed, heads, mlp, dtype in configs:
        block = (LlamaBlock(embed, heads, mlp, seq) if name.startswith("llama")
                 else Block(embed, heads, mlp)).to(dev, dtype).eval()
        x = torch.randn(batch, seq, embed, device=dev, dtype=dtype)
        print("%-26s eager          %9.3f ms" % (name, timed(block, x)))
        if hasattr(torch, "compile"):
            try:
                compiled = torch.compile(block)
                print("%-26s torch.compile  %9.3f ms" % (name, timed(compiled, x)))
            except Exception as e:  # compile needs a toolchain it may lack
                print("%-26s torch.compile  failed: %s" % (name, str(e).splitlines()[0]))
            # With CUDA graphs, the peer of tp-run's replayed runs.
            try:
                graphed = torch.compile(block, mode="reduce-overhead")
                print("%-26s torch.compile reduce-overhead (CUDA graphs) %9.3f ms"
                      % (name, timed(graphed, x)))
            except Exception as e:
                print("%-26s torch.compile reduce-overhead  failed: %s"
                      % (name, str(e).splitlines()[0]))
    # Ceilings. The GEMMs of one layer on one rank, on batch*seq tokens
    # (bias and attention matmuls aside): GPT-2's QKV, attention output, MLP
    # up and down; Llama's Q, K, V and output, gate and up, and down.
    for name, batch, seq, embed, heads, mlp, dtype in configs:
        tokens = batch * seq
        if name.startswith("llama"):
            shapes = [(tokens, embed, embed)] * 4 + [(tokens, embed, mlp)] * 2 + \
                     [(tokens, mlp, embed)]
        else:
            shapes = [(tokens, embed, 3 * embed), (tokens, embed, embed),
                      (tokens, embed, mlp), (tokens, mlp, embed)]
        ops = [(torch.randn(m, k, device=dev, dtype=dtype),
                torch.randn(k, n, device=dev, dtype=dtype)) for m, k, n in shapes]
        flops = sum(2 * m * k * n for m, k, n in shapes)
        ms = timed(lambda _: [a @ b for a, b in ops], None)
        print("%-26s cuBLAS GEMMs   %9.3f ms  %8.1f TFLOP/s (ceiling)"
              % (name, ms, flops / ms / 1e9))
    # The attention alone at the Llama-7B layer's shapes, bf16, causal: the
    # peer of tp-mlir's attention kernel (gpu-check's attention-llama7b-bf16).
    # SDPA with is_causal skips the tiles past the diagonal; with the mask as
    # a tensor it computes them all, as tp-mlir's kernel does.
    F = torch.nn.functional
    if hasattr(F, "scaled_dot_product_attention"):
        b, h, s, d = 1, 32, 2048, 128
        q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
                   for _ in range(3))
        mask = torch.ones(s, s, device=dev, dtype=torch.bool).tril()
        flops = 4 * b * h * s * s * d
        ms = timed(lambda _: F.scaled_dot_product_attention(q, k, v, is_causal=True), None)
        print("%-26s SDPA is_causal %9.3f ms  %8.1f TFLOP/s (of the full scores)"
              % ("attention 32x2048x128 bf16", ms, flops / ms / 1e9))
        ms = timed(lambda _: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None)
        print("%-26s SDPA mask      %9.3f ms  %8.1f TFLOP/s"
              % ("attention 32x2048x128 bf16", ms, flops / ms / 1e9))
    src = torch.empty(1 << 28, device=dev, dtype=torch.float32)  # 1 GiB
    dst = torch.empty_like(src)
    ms = timed(lambda _: dst.copy_(src), None)
    print("%-26s d2d copy       %9.3f ms  %8.1f GB/s (ceiling)"
          % ("1 GiB", ms, 2 * src.numel() * 4 / ms / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
