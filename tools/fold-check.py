#!/usr/bin/env python3
"""How far the folded ring strays from the simulation of every rank.

`burst simulate` folds a long ring onto one window of whole nodes where the windows are alike
(docs/cost-models.md, "Folding a long ring onto one window"); `--every-rank` simulates them all. This runs both for
every family over a grid of topologies, node counts and sequence lengths (causal mask, burst-7b's
attention) and prints each phase that was folded with its exposed share and its error against
every rank, largest last.

    tools/fold-check.py                     # the grid docs/cost-models.md reports
    tools/fold-check.py --topology a800-4hca --nodes 16 --seq 128K
"""
import argparse
import json
import subprocess
import sys


def simulate(burst, topology, nodes, model, seq, every_rank):
    command = [burst, "simulate", "--topology", topology, "--nodes", str(nodes), "--model", model, "--seq", seq,
               "--strategy", "all", "--json"] + (["--every-rank"] if every_rank else [])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"fold-check: {' '.join(command)} failed:\n{done.stderr}")
    return {s["strategy"]: s for s in json.loads(done.stdout)["strategies"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--burst", default="build/bin/burst")
    parser.add_argument("--topology", nargs="+", default=["a800-4hca", "dgx-h100", "pcie-8gpu"])
    parser.add_argument("--nodes", nargs="+", type=int, default=[4, 16])
    parser.add_argument("--seq", nargs="+", default=["128K", "256K", "512K", "1M", "2M"])
    parser.add_argument("--model", default="burst-7b")
    args = parser.parse_args()

    rows = []
    for topology in args.topology:
        for nodes in args.nodes:
            for seq in args.seq:
                folded = simulate(args.burst, topology, nodes, args.model, seq, False)
                every = simulate(args.burst, topology, nodes, args.model, seq, True)
                for name, s in folded.items():
                    if not s.get("applicable", True) or s["ring_fold"]["windows"] <= 1:
                        continue
                    for phase in ("forward", "backward"):
                        f, e = s[phase], every[name][phase]
                        rows.append((abs(f["time_s"] / e["time_s"] - 1), topology, nodes, seq, name, phase,
                                     f["exposed_comm_s"] / f["time_s"], f["time_s"] / e["time_s"] - 1))
    rows.sort()
    for _, topology, nodes, seq, name, phase, exposed, error in rows:
        print(f"{topology:10} {nodes:3} {seq:5} {name:24} {phase:8} exposed {100 * exposed:6.2f}%  "
              f"error {100 * error:+.3f}%")
    print(f"fold-check: {len(rows)} folded phases; largest error "
          f"{100 * max((r[0] for r in rows), default=0):.3f}%")


if __name__ == "__main__":
    main()
