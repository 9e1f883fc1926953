#!/usr/bin/env python3
"""`import burst` against the CLI: the same numbers for the same job, the same error messages.

Run by CTest with PYTHONPATH at the module (build/python) and BURST_CLI the built `burst`.
Each test runs the CLI with --json and the module with the same arguments, and compares the
parsed documents whole: every field, every number (JSON keeps doubles exact both ways).
"""
import ast
import json
import os
import subprocess
import tempfile
import unittest

import burst

CLI = os.environ["BURST_CLI"]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CONFIG = os.path.join(SOURCE, "docs", "examples", "config.json")
# A job small enough to plan in a second with the analytic engine.
JOB = dict(topology="a800-4hca", nodes=2, model="llama3-8b", seq="256K", engine="analytic")
JOB_ARGS = ["--topology", "a800-4hca", "--nodes", "2", "--model", "llama3-8b", "--seq", "256K", "--engine", "analytic"]


def cli(*args, check=True):
    done = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"burst {' '.join(args)} failed: {done.stderr}")
    return done


def cli_json(*args):
    return json.loads(cli(*args).stdout)


def error_lines(error):
    """A burst.Error as the CLI prints it on stderr."""
    return ["error: " + line for line in str(error).splitlines()]


class Topology(unittest.TestCase):
    def test_show_matches_cli(self):
        self.assertEqual(burst.topology("a800-4hca", nodes=4),
                         cli_json("topo", "show", "a800-4hca", "--nodes", "4", "--json"))

    def test_presets_match_list(self):
        names = [line.split()[0] for line in cli("topo", "list").stdout.splitlines()]
        self.assertEqual([p["name"] for p in burst.topology_presets()], names)


class Simulate(unittest.TestCase):
    def test_one_strategy_matches_cli(self):
        ours = burst.simulate(**JOB, strategy="burst")
        self.assertEqual(ours, cli_json("simulate", *JOB_ARGS, "--strategy", "burst", "--json"))
        self.assertGreater(ours["forward"]["time_s"], 0)

    def test_all_with_overrides_matches_cli(self):
        ours = burst.simulate(**JOB, layout="contiguous", overlap=False)
        theirs = cli_json("simulate", *JOB_ARGS, "--layout", "contiguous", "--no-overlap", "--json")
        self.assertEqual(ours, theirs)
        self.assertGreater(len(ours["strategies"]), 1)

    def test_model_dict_is_the_config_file(self):
        with open(CONFIG) as f:
            config = json.load(f)
        args = [CONFIG if a == "llama3-8b" else a for a in JOB_ARGS]
        self.assertEqual(burst.simulate(**dict(JOB, model=config), strategy="megatron-cp"),
                         cli_json("simulate", *args, "--strategy", "megatron-cp", "--json"))


class Plan(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.plan = burst.plan(**JOB)
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.dir.name, "plan.json")
        cli("plan", *JOB_ARGS, "-o", cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_plan_matches_cli(self):
        ours = dict(self.plan)
        search = ours.pop("search")
        self.assertEqual(ours, cli_json("plan", *JOB_ARGS, "--json"))
        rows = search["rows"]
        self.assertTrue(rows[0]["chosen"])
        self.assertEqual(rows[0]["strategy"], ours["strategy"]["name"])
        self.assertEqual([r for r in rows if r["chosen"]], rows[:1])
        self.assertEqual(search["candidates_scored"], ours["meta"]["candidates_evaluated"])
        # The table `burst plan` prints lists the same families in the same order.
        table = cli("plan", *JOB_ARGS).stdout.splitlines()
        first = next(i for i, line in enumerate(table) if line.startswith("#"))
        self.assertEqual([line.split()[1] for line in table[first + 1:first + 1 + len(rows)]],
                         [r["strategy"] for r in rows])
        # The tensor-parallel degree: the table's TP column, and tp= as --tp.
        self.assertEqual([int(line.split()[2]) for line in table[first + 1:first + 1 + len(rows)]],
                         [r["tp"] for r in rows])
        one = burst.plan(**JOB, tp=1)
        self.assertEqual(one["strategy"]["tp"], 1)
        self.assertEqual(one["job"]["only_tp"], 1)
        one.pop("search")
        self.assertEqual(one, cli_json("plan", *JOB_ARGS, "--tp", "1", "--json"))
        # The data-parallel degree: the DP column, dp= as --dp, batch= as --global-batch.
        self.assertEqual([int(line.split()[3]) for line in table[first + 1:first + 1 + len(rows)]],
                         [r["dp"] for r in rows])
        two = burst.plan(**JOB, batch=2, dp=2)
        self.assertEqual((two["strategy"]["dp"], two["job"]["batch"], two["job"]["only_dp"]), (2, 2, 2))
        two.pop("search")
        self.assertEqual(two, cli_json("plan", *JOB_ARGS, "--global-batch", "2", "--dp", "2", "--json"))

    def test_explain_matches_cli(self):
        self.assertEqual(burst.explain(self.path), cli("explain", self.path).stdout)
        self.assertEqual(burst.explain(self.plan), burst.explain(self.path))

    def test_export_matches_cli(self):
        for framework in ("megatron", "deepspeed"):
            self.assertEqual(burst.export(self.path, to=framework, force=True),
                             cli("export", self.path, "--to", framework, "--force").stdout)
        exported = burst.export(self.plan, to="megatron", with_notes=True)
        self.assertIn("--context-parallel-size", exported["text"])
        self.assertIsInstance(exported["notes"], list)

    def test_whatif_matches_cli_csv(self):
        grid = burst.whatif(**JOB, vary={"nodes": [1, 2]})
        self.assertEqual([p["setting"] for p in grid["points"]], [{"nodes": "1"}, {"nodes": "2"}])
        csv = os.path.join(self.dir.name, "grid.csv")
        cli("whatif", *JOB_ARGS, "--vary", "nodes=1,2", "-o", csv)
        with open(csv) as f:
            rows = [line.split(",") for line in f.read().splitlines()[1:]]
        self.assertEqual([row[2] for row in rows], [p["strategy"] for p in grid["points"]])
        for row, point in zip(rows, grid["points"]):
            self.assertEqual(float(row[4]), float(f"{point['tokens_per_s_per_gpu']:.6g}"))


class Stubs(unittest.TestCase):
    """burst.pyi (beside the module) names every public function with the keywords it accepts."""

    def setUp(self):
        path = os.path.join(os.path.dirname(burst.__file__), "burst.pyi")
        with open(path) as f:
            tree = ast.parse(f.read())
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def fields(self, typed_dict):
        """A TypedDict's keys, its bases' included."""
        node = self.classes[typed_dict]
        keys = [b for base in node.bases if isinstance(base, ast.Name) and base.id in self.classes
                for b in self.fields(base.id)]
        return keys + [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]

    def keywords(self, name):
        args = self.functions[name].args
        named = [a.arg for a in args.args + args.kwonlyargs]
        if args.kwarg is not None:  # **kwargs: Unpack[SomeKeywords]
            named += self.fields(args.kwarg.annotation.slice.id)
        return named

    def accepted(self, function, *args, **required):
        """The keywords the module accepts: those its error for an unknown one lists as valid."""
        with self.assertRaises(burst.Error) as caught:
            function(*args, **required, not_a_keyword=1)
        listed = [p["valid"] for p in caught.exception.problems if p["where"] == "not_a_keyword"]
        self.assertEqual(len(listed), 1)
        return listed[0].split(", ")

    def test_every_public_name_has_a_stub(self):
        public = {n for n in dir(burst) if not n.startswith("_")}
        self.assertEqual(public, set(self.functions) | {"Error"})

    def test_keywords_match_the_module(self):
        job = dict(topology="a800-4hca", model="tiny-mha", seq="1K")
        for name in ("simulate", "plan", "whatif"):
            self.assertEqual(sorted(self.keywords(name)), sorted(self.accepted(getattr(burst, name), **job)), name)
        self.assertEqual(sorted(self.keywords("topology")), sorted(["topology"] + self.accepted(burst.topology, "a800-4hca")))
        # The others have real signatures: their pybind11 docstrings name the parameters.
        for name in ("explain", "export", "topology_presets"):
            signature = getattr(burst, name).__doc__.splitlines()[0]
            named = [p.split(":")[0].strip() for p in signature[signature.index("(") + 1:signature.index(")")].split(",")
                     if p.strip()]
            self.assertEqual(self.keywords(name), named, name)


class Errors(unittest.TestCase):
    def test_unknown_preset_says_what_the_cli_says(self):
        with self.assertRaises(burst.Error) as caught:
            burst.topology("a800-4hc")
        self.assertIsInstance(caught.exception, ValueError)
        done = cli("topo", "show", "a800-4hc", check=False)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(error_lines(caught.exception), done.stderr.splitlines())
        self.assertIn("did you mean 'a800-4hca'?", str(caught.exception))
        self.assertEqual(caught.exception.problems[0]["hint"], "did you mean 'a800-4hca'?")

    def test_every_problem_at_once(self):
        with self.assertRaises(burst.Error) as caught:
            burst.plan(topology="a800-4hca", model="llama-3-8b", seq="1Q")
        done = cli("plan", "--topology", "a800-4hca", "--model", "llama-3-8b", "--seq", "1Q", check=False)
        self.assertEqual(error_lines(caught.exception), done.stderr.splitlines())
        self.assertEqual(len(caught.exception.problems), 2)

    def test_no_plan_fits(self):
        with self.assertRaises(burst.Error) as caught:
            burst.plan(**dict(JOB, nodes=1, seq="4M"))
        done = cli("plan", *[a if a != "256K" else "4M" for a in JOB_ARGS[:3] + ["1"] + JOB_ARGS[4:]], check=False)
        self.assertIn("no plan fits", str(caught.exception))
        self.assertEqual(error_lines(caught.exception), done.stderr.splitlines()[-1:])

    def test_fp8_linears(self):
        # Refused where the GPUs have no FP8 tensor cores, as the CLI refuses it ...
        with self.assertRaises(burst.Error) as caught:
            burst.plan(**JOB, fp8_linears=True)
        done = cli("plan", *JOB_ARGS, "--fp8-linears", check=False)
        self.assertIn("--fp8-linears: A800-SXM4-80GB has no FP8 tensor cores", str(caught.exception))
        self.assertEqual(error_lines(caught.exception), done.stderr.splitlines())
        # ... and recorded in the plan on Hopper, faster than the same job in bf16.
        hopper = dict(topology="dgx-h100", model="llama3-8b", seq="32K", engine="analytic", strategy="megatron-cp")
        args = ["--topology", "dgx-h100", "--model", "llama3-8b", "--seq", "32K", "--engine", "analytic",
                "--strategy", "megatron-cp"]
        fp8 = burst.plan(**hopper, fp8_linears=True)
        fp8.pop("search")
        self.assertEqual(fp8["job"]["linears"], "fp8")
        self.assertEqual(fp8, cli_json("plan", *args, "--fp8-linears", "--json"))
        self.assertLess(fp8["predicted"]["step_time_s"], cli_json("plan", *args, "--json")["predicted"]["step_time_s"])

    def test_checkpoint_and_margin(self):
        # checkpoint= as --checkpoint: every family priced with that policy, refused for seq_stash.
        fixed = burst.plan(**JOB, checkpoint="attn_stash", memory_margin="1GiB")
        fixed.pop("search")
        self.assertEqual(fixed, cli_json("plan", *JOB_ARGS, "--checkpoint", "attn_stash", "--memory-margin", "1GiB",
                                         "--json"))
        self.assertEqual(fixed["strategy"]["checkpoint"]["policy"], "attn_stash")
        with self.assertRaises(burst.Error) as caught:
            burst.plan(**JOB, checkpoint="seq_stash")
        done = cli("plan", *JOB_ARGS, "--checkpoint", "seq_stash", check=False)
        self.assertIn("--checkpoint: seq_stash is burst's own", str(caught.exception))
        self.assertEqual(error_lines(caught.exception), done.stderr.splitlines())

    def test_unknown_keyword(self):
        with self.assertRaisesRegex(burst.Error, "nodez: unknown keyword argument .*did you mean 'nodes'"):
            burst.simulate(**JOB, nodez=4)

    def test_wrong_type(self):
        with self.assertRaisesRegex(burst.Error, "nodes: a str is not valid here"):
            burst.plan(**dict(JOB, nodes="4"))

    def test_not_a_plan(self):
        with self.assertRaisesRegex(burst.Error, '<dict>:/schema: missing "schema"'):
            burst.export({}, to="megatron")


if __name__ == "__main__":
    unittest.main()
