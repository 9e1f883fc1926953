#!/usr/bin/env python3
"""Plan the training of a Hugging Face model at its full context and print Megatron-LM's arguments.

    PYTHONPATH=build/python python3 docs/examples/plan_from_hf_config.py docs/examples/config.json \\
        --topology a800-4hca --nodes 2

Reads the model's dimensions from its config.json (the file `huggingface-cli download` puts next
to the weights), plans at max_position_embeddings tokens (or --seq), prints the chosen strategy
and its ranked rivals, then the plan as Megatron-LM arguments with what Megatron cannot do and
what its nearest equivalent costs (as comments).
"""
import argparse
import json

import burst

# What burst reads from a config.json; everything else (rope, dtype, ...) does not change a plan.
MODEL_KEYS = ("_name_or_path", "hidden_size", "num_attention_heads", "num_key_value_heads", "num_hidden_layers",
              "intermediate_size", "vocab_size", "hidden_act", "head_dim")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", help="a Hugging Face config.json")
    parser.add_argument("--topology", default="a800-4hca", help="preset, our JSON or an NCCL XML dump")
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--seq", help="tokens per sequence, e.g. 1M (default: max_position_embeddings)")
    parser.add_argument("--engine", default="event", help="event (link contention) or analytic (fast)")
    args = parser.parse_args()

    with open(args.config) as f:
        config = json.load(f)
    model = {key: config[key] for key in MODEL_KEYS if key in config}
    seq = args.seq or config["max_position_embeddings"]

    try:
        plan = burst.plan(topology=args.topology, nodes=args.nodes, model=model, seq=seq, engine=args.engine)
    except burst.Error as e:  # bad input, or no plan fits: the CLI's messages
        raise SystemExit(f"error: {e}")

    strategy = plan["strategy"]
    print(f"# {plan['job']['model']['name']} at {seq} tokens on {args.nodes} x {args.topology}: {strategy['name']}, "
          f"context parallel {strategy['cp']}, Ulysses {strategy['ulysses']}")
    for row in plan["search"]["rows"]:
        if row["feasible"]:
            print(f"#   {row['strategy']:<24} {row['tokens_per_s_per_gpu']:10.1f} tokens/s per GPU")
        else:
            print(f"#   {row['strategy']:<24} no: {row['reason']}")
    print(burst.export(plan, to="megatron"), end="")


if __name__ == "__main__":
    main()
