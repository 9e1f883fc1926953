#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on this GPU, for `burst bench attention --device cuda`.

Prints one JSON object: forward and backward seconds (best of --repeat, CUDA events) and the
TFLOP/s of the same FLOP count burst uses (forward 4*d per computed score, backward 10*d for a
full mask; causal counts half the scores, as FlashAttention's own benchmarks do). With the flash
backend SDPA runs FlashAttention-2. Exits 3 with {"unavailable": reason} when torch, CUDA or
the mask is not available, so burst can print why the comparison is missing.
"""
import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--kv-heads", type=int, required=True)
    ap.add_argument("--head-dim", type=int, required=True)
    ap.add_argument("--mask", choices=["full", "causal"], required=True)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(json.dumps({"unavailable": f"python3 cannot import torch ({e})"}))
        return 3
    if not torch.cuda.is_available():
        print(json.dumps({"unavailable": "torch sees no CUDA device"}))
        return 3

    n, h, hkv, d = args.tokens, args.heads, args.kv_heads, args.head_dim
    dev = torch.device("cuda")
    q = torch.randn(1, h, n, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, hkv, n, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(1, hkv, n, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    d_o = torch.randn(1, h, n, d, device=dev, dtype=torch.bfloat16)
    causal = args.mask == "causal"
    gqa = {"enable_gqa": True} if hkv != h else {}

    def forward():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, **gqa)

    def timed(fn):
        best = float("inf")
        for _ in range(args.repeat + 1):  # the first run warms up
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            best = min(best, start.elapsed_time(end) / 1e3)
        return best

    fwd_s = timed(forward)
    out = forward()
    bwd_s = timed(lambda: torch.autograd.grad(out, (q, k, v), d_o, retain_graph=True))
    scores = n * n * h * (0.5 if causal else 1.0)
    print(json.dumps({
        "forward_s": fwd_s,
        "backward_s": bwd_s,
        "forward_tflops": 4 * d * scores / fwd_s / 1e12,
        "backward_tflops": 10 * d * scores / bwd_s / 1e12,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
