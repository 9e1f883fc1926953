#!/usr/bin/env python3
"""One full PyTorch training step of burst's model on this GPU, for `burst bench training --device cuda`.

The model is burst's (runtime/training/model.hpp), tensor for tensor: an embedding table
[vocab, hidden]; per layer an attention RMSNorm gain, Wq [hidden, heads*head_dim], Wk and Wv
[hidden, kv_heads*head_dim], Wo [heads*head_dim, hidden], an MLP RMSNorm gain, W_gate and W_up
[hidden, ffn], W_down [ffn, hidden]; a final RMSNorm gain and an untied LM head [hidden, vocab].
No biases. Matrices are [in, out] (y = x W). RMSNorm eps 1e-5; RoPE base 10000 on Q and K in
the Hugging Face "halves" layout (pair i with i + head_dim/2); causal attention through
scaled_dot_product_attention (GQA: enable_gqa on torch >= 2.5, else KV heads repeated, query
head h reading KV head h // (heads / kv_heads) as burst does); SwiGLU MLP; loss the mean
cross-entropy of each token's next token. Initialisation as burst's: gains 1, matrices
N(0, 0.02), Wo and W_down scaled by 1 / sqrt(2 layers).

Precision as burst's GPU step: the parameters are fp32 master tensors; the forward rounds each
to a bf16 copy (autograd keeps it for the backward), so activations and the dense products are
bf16, while RMSNorm and RoPE compute in fp32 and the logits and loss are fp32. Each gradient
reaches its fp32 master tensor through that cast (dW is a bf16 GEMM output, upcast).
torch.optim.AdamW (fused) then steps the fp32 weights and fp32 moments with burst's settings:
betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on matrices and none on gains, gradients clipped
to global norm 1. The LM head is unfused (whole logits), as burst's lm_head_chunks 1.

One sequence of --tokens random ids (fixed seed), batch 1. A step is zero_grad, forward,
backward, clip and optimizer step, timed with CUDA events after --warmup untimed steps.

Prints one JSON object. model_flops_per_step follows burst's simulator (iteration_model.cpp):
3 x the forward's matmul FLOPs, the forward being 2 FLOPs per multiply-add of every matrix
except the embedding (a lookup) plus attention's 4 * head_dim per (head, query, key) pair the
causal mask allows, tokens * (tokens + 1) / 2 per head. With T tokens and P parameters:
  6 T (P - vocab hidden - (2 layers + 1) hidden) + 6 layers heads head_dim T (T + 1)
Exits 3 with {"unavailable": reason} when torch (2.0 or later) or CUDA is missing, or the step runs
out of GPU memory.
"""
import argparse
import json
import math
import statistics
import sys

FIELDS = ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab")
NORM_EPS = 1e-5
ROPE_BASE = 10000.0


def spec_from_file(path):
    """A Hugging Face config.json (as burst --model reads it), a burst plan, or its job.model object."""
    with open(path) as f:
        doc = json.load(f)
    doc = doc.get("job", {}).get("model", doc)
    if "hidden_size" not in doc:
        return {k: doc[k] for k in FIELDS if k in doc}
    heads = doc["num_attention_heads"]
    return {"layers": doc["num_hidden_layers"], "hidden": doc["hidden_size"], "ffn": doc["intermediate_size"],
            "heads": heads, "kv_heads": doc.get("num_key_value_heads") or heads,
            "head_dim": doc.get("head_dim") or doc["hidden_size"] // heads, "vocab": doc["vocab_size"]}


def model_spec(ap, args):
    spec = spec_from_file(args.model) if args.model else {}
    spec.update({k: getattr(args, k) for k in FIELDS if getattr(args, k) is not None})
    if "head_dim" not in spec and "hidden" in spec and "heads" in spec:
        spec["head_dim"] = spec["hidden"] // spec["heads"]
    missing = [k for k in FIELDS if k not in spec]  # head_dim is missing only where hidden or heads is
    if missing:
        ap.error("give --model or --" + ", --".join(k.replace("_", "-") for k in missing if k != "head_dim"))
    if min(spec.values()) < 1 or spec["heads"] % spec["kv_heads"] or spec["head_dim"] % 2:
        ap.error(f"not a model burst trains: {spec} (all positive, kv_heads dividing heads, head_dim even)")
    return spec


def measure(spec, args, torch, F):
    """Builds the model, runs the steps and returns the JSON object."""
    L, h, f, H, K, d, V = (spec[k] for k in FIELDS)
    n, dev, bf16 = args.tokens, torch.device("cuda"), torch.bfloat16
    torch.manual_seed(0)

    def matrix(rows, cols, scale=1.0):
        return (torch.randn(rows, cols, device=dev) * (0.02 * scale)).requires_grad_()

    def gain():
        return torch.ones(h, device=dev, requires_grad=True)

    res = 1 / math.sqrt(2 * L)
    layers = [{"attn_norm": gain(), "wq": matrix(h, H * d), "wk": matrix(h, K * d), "wv": matrix(h, K * d),
               "wo": matrix(H * d, h, res), "mlp_norm": gain(), "w_gate": matrix(h, f), "w_up": matrix(h, f),
               "w_down": matrix(f, h, res)} for _ in range(L)]
    embedding, final_norm, lm_head = matrix(V, h), gain(), matrix(h, V)
    named = [("embedding", embedding)] + [(k, t) for layer in layers for k, t in layer.items()]
    named += [("final_norm", final_norm), ("lm_head", lm_head)]
    params = [t for _, t in named]
    opt = torch.optim.AdamW(
        [{"params": [t for k, t in named if not k.endswith("norm")], "weight_decay": 0.1},
         {"params": [t for k, t in named if k.endswith("norm")], "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)

    ids = torch.randint(0, V, (n + 1,), device=dev)
    tokens, targets = ids[:-1], ids[1:]
    freq = ROPE_BASE ** (-2.0 * torch.arange(d // 2, dtype=torch.float64, device=dev) / d)
    angle = torch.arange(n, dtype=torch.float64, device=dev)[:, None] * freq  # in double, as burst
    cos = torch.cat([angle.cos(), angle.cos()], -1).float()[:, None, :]  # [n, 1, d]
    sin = torch.cat([angle.sin(), angle.sin()], -1).float()[:, None, :]
    gqa = tuple(int(x) for x in torch.__version__.split(".")[:2]) >= (2, 5)

    def rms_norm(x, g):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + NORM_EPS) * g).to(bf16)

    def rope(x):  # x [n, heads, d]: x_i' = x_i cos - x_{i+d/2} sin, x_{i+d/2}' = x_{i+d/2} cos + x_i sin
        xf = x.float()
        first, second = xf.chunk(2, -1)
        return (xf * cos + torch.cat([-second, first], -1) * sin).to(bf16)

    def attention(q, k, v):  # [n, heads, d] each; returns [n, heads * d]
        q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
        if K != H and not gqa:
            k, v = k.repeat_interleave(H // K, dim=1), v.repeat_interleave(H // K, dim=1)
        extra = {"enable_gqa": True} if K != H and gqa else {}
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
        return o.squeeze(0).transpose(0, 1).reshape(n, H * d)

    def loss_of():
        x = F.embedding(tokens, embedding).to(bf16)
        for layer in layers:
            w = {k: t.to(bf16) for k, t in layer.items()}
            a = rms_norm(x, w["attn_norm"])
            q, k = rope((a @ w["wq"]).view(n, H, d)), rope((a @ w["wk"]).view(n, K, d))
            x = x + attention(q, k, (a @ w["wv"]).view(n, K, d)) @ w["wo"]
            b = rms_norm(x, w["mlp_norm"])
            x = x + (F.silu(b @ w["w_gate"]) * (b @ w["w_up"])) @ w["w_down"]
        logits = (rms_norm(x, final_norm.to(bf16)) @ lm_head.to(bf16)).float()
        return F.cross_entropy(logits, targets)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0, foreach=True)
        opt.step()
        return loss.detach()

    times, losses = [], []
    for i in range(args.warmup + args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        end.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(start.elapsed_time(end) / 1e3)
            losses.append(loss.item())

    parameters = sum(t.numel() for t in params)
    matmul_params = parameters - V * h - (2 * L + 1) * h  # the embedding is a lookup, gains are not GEMMs
    flops = 6 * n * matmul_params + 6 * L * H * d * n * (n + 1)
    median = statistics.median(times)
    out = {
        "model": spec,
        "parameters": parameters,
        "tokens": n,
        "step_s_median": median,
        "step_s_min": min(times),
        "tokens_per_s": n / median,
        "model_flops_per_step": flops,
        "flops_convention": "burst's: 3 x forward; forward = 2 per multiply-add of every matrix but the embedding "
                            "+ 4*head_dim per causal (head, query, key) pair, diagonal included",
        "peak_memory_bytes": torch.cuda.max_memory_allocated(),
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "losses": losses,
    }
    if args.peak_tflops:
        out["mfu"] = flops / median / (args.peak_tflops * 1e12)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a model JSON file: Hugging Face config.json, burst plan or its job.model")
    for k in FIELDS:
        ap.add_argument("--" + k.replace("_", "-"), dest=k, type=int, help="overrides --model")
    ap.add_argument("--tokens", type=int, required=True, help="sequence length (batch 1)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--peak-tflops", type=float, help="the GPU's peak bf16 TFLOP/s: adds mfu")
    args = ap.parse_args()
    spec = model_spec(ap, args)
    if args.tokens < 1 or args.steps < 1 or args.warmup < 0:
        ap.error("--tokens and --steps must be positive, --warmup not negative")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(json.dumps({"unavailable": f"python3 cannot import torch ({e})"}))
        return 3
    if not torch.cuda.is_available():
        print(json.dumps({"unavailable": "torch sees no CUDA device"}))
        return 3
    if not hasattr(F, "scaled_dot_product_attention"):
        print(json.dumps({"unavailable": f"torch {torch.__version__} has no scaled_dot_product_attention (2.0+)"}))
        return 3
    try:
        out = measure(spec, args, torch, F)
    except torch.cuda.OutOfMemoryError as e:
        print(json.dumps({"unavailable": f"out of memory at {args.tokens} tokens ({str(e).splitlines()[0]})"}))
        return 3
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
