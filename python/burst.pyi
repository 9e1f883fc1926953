"""Type stubs of `import burst` (docs/python.md): the CLI's job-shaped commands as functions of
plain data. The job-shaped ones take keywords only, typed by the TypedDicts below (Required ones
must be given; an omitted one takes the CLI's default). tests/python/test_api.py checks these
names against the module's own.
"""
from typing import Any, Literal, Mapping, Required, Sequence, TypedDict, Unpack

# A JSON document as a dict: the CLI's --json output, a plan (burst.plan/2), a topology summary.
Json = dict[str, Any]
# Token counts: the CLI's spellings ("1M", "512K") or ints.
Tokens = str | int
# A preset name, a Hugging Face config.json path, or such a config as a dict.
Model = str | Mapping[str, Any]
Family = Literal["burst", "burst-usp", "megatron-cp", "ds-ulysses", "loongtrain-double-ring", "loongtrain-usp", "ring"]
Engine = Literal["event", "analytic"]
Framework = Literal["megatron", "nemo", "deepspeed", "torchtitan"]

class Error(ValueError):
    """Every problem of a call at once, as the CLI prints them after `error: `."""

    problems: list[dict[str, str]]  # {"where", "what", "valid", "hint"}

def topology(
    topology: str,
    *,
    nodes: int = ...,
    per_node: int = ...,
    nvlink_from: str = ...,
    gpu_from: str = ...,
    nic_speed: str = ...,
) -> Json:
    """`burst topo show --json`: a preset, our JSON or an NCCL XML dump, summarised."""

def topology_presets() -> list[dict[str, str]]:
    """`burst topo list`: [{"name", "description"}]."""

class JobKeywords(TypedDict, total=False):
    """The keywords every job-shaped function takes (simulate, plan, whatif)."""

    topology: Required[str]
    model: Required[Model]
    seq: Required[Tokens]
    nodes: int
    per_node: int
    nvlink_from: str
    gpu_from: str
    nic_speed: str
    vocab: int
    batch: int
    global_batch_tokens: Tokens
    mask: str
    dtype: Literal["bf16", "fp32"]
    compute_model: Literal["roofline", "peak"]
    comm_model: Literal["calibrated", "ideal"]
    calibration: str

class SimulateKeywords(JobKeywords, total=False):
    strategy: Family | Literal["all"]
    engine: Engine
    layout: Literal["contiguous", "zigzag", "striped"]
    backward: Literal["kv_ring", "q_ring"]
    ring: Literal["flat", "double"]
    inner: int
    ulysses: int
    overlap: bool

class PlanKeywords(JobKeywords, total=False):
    memory_budget: str | int | float
    memory_margin: str | int | float
    strategy: Family
    tp: int | None
    dp: int | None
    engine: Engine
    max_candidates: int
    fp8_linears: bool
    checkpoint: Literal["none", "full", "attn_stash"]

class WhatifKeywords(PlanKeywords, total=False):
    vary: Required[Mapping[str, Sequence[str | int | float]]]

def simulate(**kwargs: Unpack[SimulateKeywords]) -> Json:
    """`burst simulate --json`: one attention layer (forward + backward) per strategy."""

def plan(**kwargs: Unpack[PlanKeywords]) -> Json:
    """`burst plan --json` (the burst.plan/2 dict) plus "search", the ranked table."""

def explain(plan: Json | str) -> str:
    """`burst explain`: why the plan (a dict from plan() or a file's path) won."""

def whatif(**kwargs: Unpack[WhatifKeywords]) -> Json:
    """`burst whatif`'s grid as data: {"job", "points": [{"setting", "strategy", ...}]}."""

def export(
    plan: Json | str, to: Framework, with_notes: bool = False, force: bool = False, nemo_version: int = 2
) -> str | Json:
    """`burst export --to`: the plan as a framework's settings; with_notes=True: {"text", "notes"};
    nemo_version: NeMo's output, 2 (a Python recipe) or 1 (NeMo 1.0's YAML)."""
