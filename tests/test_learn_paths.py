"""contractsim learn on path-keyed state (issue 17): subtree copy / move / removal effects, whole
converted values, optional parameters, special names and the exceptions an effect may leave.

The synthetic tool below is a small file tree written in Python; its runs are recorded with
the state after every call, learned from, and replayed on runs the learner never saw."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import contractsim
from contractsim.api import check_text, learn_from_runs, loads
from contractsim.learning import skeleton_of
from contractsim.learning.atoms import (
    MISSING,
    atoms_for,
    equality_atoms,
    path_terms,
    terms_for,
)
from contractsim.learning.effects import EXCEPTIONS, Observation, learn_variable
from contractsim.replay import read_runs, replay_runs

SKELETON = """contract tree version "1.0.0"
state {
  root: str = "/r"
  cwd: str = "/r"
  dirs: set[str] = {"/r", "/r/a", "/r/a/s"}
  files: map[str, str] = {"/r/a/f.txt": "one", "/r/a/s/g.txt": "two", "/r/h.txt": "three"}
}
tool cd(folder: str) {
}
tool mkdir(name: str) {
}
tool write(text: str accepts any, name?: str) {
}
tool cp(source: str, destination: str) {
}
tool mv(source: str, destination: str) {
}
tool rm(name: str) {
}
"""


class Tree:
    """The tool: a directory tree by absolute path, with a current directory."""

    def __init__(self) -> None:
        self.cwd = "/r"
        self.dirs = {"/r", "/r/a", "/r/a/s"}
        self.files = {"/r/a/f.txt": "one", "/r/a/s/g.txt": "two", "/r/h.txt": "three"}

    def state(self) -> dict[str, Any]:
        return {"root": "/r", "cwd": self.cwd, "dirs": sorted(self.dirs), "files": dict(self.files)}

    def _exists(self, p: str) -> bool:
        return p in self.dirs or p in self.files

    def call(self, tool: str, args: dict[str, Any]) -> str | None:
        """Run one call; the error message, or None on success."""
        here = self.cwd
        if tool == "cd":
            folder = args["folder"]
            if folder == "..":
                if here == "/r":
                    return "cd: already at the root"
                self.cwd = here.rsplit("/", 1)[0]
            elif folder == "/":
                self.cwd = "/r"
            elif here + "/" + folder in self.dirs:
                self.cwd = here + "/" + folder
            else:
                return f"cd: '{folder}': no such directory"
            return None
        if tool == "mkdir":
            p = here + "/" + args["name"]
            if self._exists(p):
                return f"mkdir: '{args['name']}': exists"
            self.dirs.add(p)
            return None
        if tool == "write":
            name = args.get("name")
            if name is None:
                return None  # display only
            p = here + "/" + name
            if p not in self.files:
                return f"write: '{name}': no such file"
            self.files[p] = str(args["text"])
            return None
        if tool == "rm":
            p = here + "/" + args["name"]
            if not self._exists(p):
                return f"rm: '{args['name']}': no such entry"
            self._drop(p)
            return None
        src, dst = args["source"], args["destination"]
        s = here + "/" + src
        if not self._exists(s):
            return f"{tool}: '{src}': no such entry"
        t = here + "/" + dst + "/" + src if here + "/" + dst in self.dirs else here + "/" + dst
        if self._exists(t):
            return f"{tool}: '{dst}': exists"
        if t.startswith(s + "/"):
            return f"{tool}: '{src}' into itself"
        for d in [d for d in self.dirs if d == s or d.startswith(s + "/")]:
            self.dirs.add(t + d[len(s) :])
        for f in [f for f in self.files if f == s or f.startswith(s + "/")]:
            self.files[t + f[len(s) :]] = self.files[f]
        if tool == "mv":
            self._drop(s)
        return None

    def _drop(self, p: str) -> None:
        self.dirs = {d for d in self.dirs if not (d == p or d.startswith(p + "/"))}
        self.files = {k: v for k, v in self.files.items() if not (k == p or k.startswith(p + "/"))}


NAMES = ["a", "s", "b", "f.txt", "g.txt", "h.txt", "k.txt"]


def _args(tool: str, rng: random.Random) -> dict[str, Any]:
    if tool == "cd":
        # an open set of names (no directory holds the n-names): `..` and `/` are special
        names = ["..", "..", "/", "a", "a", "s", "s", "b", *NAMES]
        return {"folder": rng.choice([*names, f"n{rng.randrange(12)}"])}
    if tool == "write":
        args: dict[str, Any] = {"text": rng.choice(["x", "y z", 7, 2.5])}
        if rng.random() < 0.8:
            args["name"] = rng.choice(NAMES)
        return args
    if tool in ("cp", "mv"):
        return {"source": rng.choice(NAMES), "destination": rng.choice(NAMES)}
    return {"name": rng.choice(NAMES)}


def record(path: Path, runs: int, seed: int) -> str:
    """``runs`` random runs of the tool, 20 calls each, with the state after every call."""
    rng = random.Random(seed)
    lines = []
    for n in range(runs):
        tree = Tree()
        steps = []
        for _ in range(20):
            tool = rng.choice(["cd", "cd", "cd", "mkdir", "mkdir", "write", "cp", "mv", "rm"])
            args = _args(tool, rng)
            error = tree.call(tool, args)
            steps.append(
                {
                    "tool": tool,
                    "args": args,
                    "outcome": "error" if error else "ok",
                    "error": error,
                    "result": None,
                    "state_after": tree.state(),
                }
            )
        lines.append(json.dumps({"name": f"run{n}", "state": Tree().state(), "steps": steps}))
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def learned_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    folder = tmp_path_factory.mktemp("tree")
    skeleton = loads(SKELETON, "tree.contract")
    train = read_runs(record(folder / "train.jsonl", 80, 1), skeleton.compiled)
    return learn_from_runs(skeleton, train), record(folder / "test.jsonl", 40, 2)


def test_subtree_copy_move_and_removal_are_learned_and_replayed_on_other_runs(
    learned_tree: tuple[Any, str],
) -> None:
    result, held_out = learned_tree
    text = result.text
    assert [d for d in check_text(text, "t.contract") if d.severity == "error"] == []
    # rm: everything at or below the path goes
    assert (
        '  effect for item in dirs { if item == cwd + "/" + name or startswith(item, cwd + "/" '
        '+ name + "/") { dirs.remove(item) } }\n'
    ) in text
    # cp: every key below the source re-keyed below the landing path, the top entry too
    assert (
        '      for item in keys(files) { if startswith(item, cwd + "/" + source + "/") { '
        'files[cwd + "/" + destination + "/" + source + "/" + join(drop(split(item, "/"), '
        'len(split(cwd + "/" + source, "/"))), "/")] = files[item] } }\n'
    ) in text
    # mv: the same, then the source's subtree removed
    mv = text[text.index("tool mv") : text.index("tool rm")]
    assert (
        'for item in keys(files) { if item == cwd + "/" + source or startswith(item, cwd + "/" '
        '+ source + "/") { files.remove(item) } }'
    ) in mv
    replayed = replay_runs(result.contract, read_runs(held_out, result.contract.compiled))
    # measured 0.998 / 0.988 (`cp d d` into itself is no atom of the language; one coincidental
    # clause of 80 runs) and effect agreement 0.970 carried / 0.997 from the real state (80 runs
    # confuse root and cwd in a few terms: the runs seldom leave the root)
    assert replayed.precision is not None and replayed.precision >= 0.99
    assert replayed.recall is not None and replayed.recall >= 0.98
    assert replayed.effects.from_real is not None and replayed.effects.from_real >= 0.99
    assert replayed.effects.carried is not None and replayed.effects.carried >= 0.96


def test_whole_converted_values_optional_parameters_and_special_names(
    learned_tree: tuple[Any, str],
) -> None:
    result, _ = learned_tree
    text = result.text
    write = text[text.index("tool write") : text.index("tool cp")]
    # str(text): the tool writes the text form of any value (7 → "7"); the optional name is
    # guarded (absent: display only) — in the precondition and in the effect
    assert '  require name == null or cwd + "/" + name in files\n' in write
    assert (
        '  effect {\n    if name != null {\n      files[cwd + "/" + name] = str(text)\n    }\n  }\n'
    ) in write
    cd = text[text.index("tool cd") : text.index("tool mkdir")]
    # `..` and `/` are frequent special names: an atom with two exceptional constants
    assert '  require cwd + "/" + folder in dirs or folder == ".." or folder == "/"\n' in cd
    # two text state values compared: not at the root
    assert '  require root != cwd or folder != ".."\n' in cd


def test_an_effect_may_leave_one_in_fifty_observations_no_template_explains() -> None:
    def obs(before: str, after: str, p: str) -> Observation:
        return Observation({"p": p}, {"x": before}, after, None)

    terms = terms_for(["p"], [], {}, (), 64)  # the parameter term `p`
    good = [obs("a", f"v{i}", f"v{i}") for i in range(EXCEPTIONS - 1)]
    odd = obs("a", "None", "null-ish")  # a value no template writes
    kept = learn_variable("x", "str", [*good, odd], terms, {"x": "str"}, [], 2)
    assert kept.lines == ["x = p"] and kept.unexplained == 1 and kept.kept
    assert kept.exceptions_allowed == 1
    # two such observations in fifty: not kept (reported)
    dropped = learn_variable("x", "str", [*good[:-1], odd, odd], terms, {"x": "str"}, [], 2)
    assert dropped.unexplained == 2 and not dropped.kept
    # fewer than fifty observations: every one must be explained
    small = learn_variable("x", "str", [*good[:10], odd], terms, {"x": "str"}, [], 2)
    assert small.exceptions_allowed == 0 and not small.kept
    # --effect-exceptions 0: the issue's strict rule, every observation explained
    strict = learn_variable("x", "str", [*good, odd], terms, {"x": "str"}, [], 2, exceptions=0)
    assert strict.lines == ["x = p"] and strict.exceptions_allowed == 0 and not strict.kept
    # one in ten: five exceptions allowed in the fifty observations
    loose = learn_variable("x", "str", [*good, odd], terms, {"x": "str"}, [], 2, exceptions=10)
    assert loose.exceptions_allowed == 5 and loose.kept


def test_path_terms_guard_optional_parameters_in_both_forms() -> None:
    terms = path_terms(["a", "b"], ["o"], ["cwd"])
    assert [t.text for t in terms] == [
        'cwd + "/" + a',
        'cwd + "/" + b',
        'cwd + "/" + o',
        'cwd + "/" + a + "/" + b',
        'cwd + "/" + b + "/" + a',
    ]
    assert terms[2].guard == "o != null"
    assert terms[3]({"a": "x", "b": "y"}, {"cwd": "/r"}) == "/r/x/y"
    assert terms[2]({}, {"cwd": "/r"}) is MISSING
    calls = [({"o": "f"}, {"cwd": "/r", "files": {"/r/f": ""}}), ({}, {"cwd": "/r", "files": {}})]
    atoms = {
        a.text: a
        for a in atoms_for(
            ["o"], [terms[2]], calls, {"files": "collection"}, 400, 2, optional=["o"]
        )
    }
    strict = atoms['o != null and cwd + "/" + o in files']
    vacuous = atoms['o == null or cwd + "/" + o in files']
    assert [strict(*c) for c in calls] == [True, False]
    assert [vacuous(*c) for c in calls] == [True, True]
    same = equality_atoms(["a", "b"], [({"a": "d", "b": "d"}, {})] * 2, 2)
    assert [a.text for a in same] == ["a == b", "a != b"]


def test_frequent_constants_only_for_open_value_sets() -> None:
    calls = [({"f": v}, {}) for v in [".."] * 10 + [f"n{i}" for i in range(40)]]
    texts = [a.text for a in atoms_for(["f"], [], calls, {}, 400, 2)]
    assert 'f == ".."' in texts and 'f != ".."' in texts
    assert not any("n1" in t for t in texts)  # seen once each: no constants


GORILLA = "examples/gorilla_fs/gorilla_fs.contract"
SNAPSHOTS = "tests/data/bfcl/GorillaFileSystem.snapshots.jsonl"


@pytest.mark.slow
def test_gorilla_effects_of_the_learned_contract_agree_with_the_real_state() -> None:
    """The new templates on the real data: cp, mv, rm and echo effects are learned and kept."""
    skeleton = loads(skeleton_of(contractsim.load(GORILLA)), "skeleton.contract")
    result = learn_from_runs(skeleton, read_runs(SNAPSHOTS, skeleton.compiled)[:200])
    effects = {
        (tool, e["variable"]): e
        for tool, model in result.report()["tools"].items()
        for e in model["effects"]
    }
    # the exceptions: echo writes "None" for null (str(null) is "null"), and the tool's shallow
    # cp shares a directory between two paths (the LIMIT of the shipped contract)
    exceptions = {
        ("cp", "dirs"): 0,
        ("cp", "files"): 1,
        ("mv", "dirs"): 0,
        ("mv", "files"): 0,
        ("rm", "dirs"): 0,
        ("rm", "files"): 0,
        ("echo", "files"): 2,
    }
    assert {key: effects[key]["unexplained"] for key in exceptions} == exceptions
    assert 'files[cwd + "/" + file_name] = str(content)' in result.text
    held_out = read_runs(SNAPSHOTS, result.contract.compiled)[200:]
    replayed = replay_runs(result.contract, held_out)
    # measured 0.9925 carried / 0.9994 from the real state (was 0.797 / 0.956)
    assert replayed.effects.carried is not None and replayed.effects.carried >= 0.99
    assert replayed.effects.from_real is not None and replayed.effects.from_real >= 0.999


STOCK = """contract stock version "1.0.0"
type Item = record { qty: number, unit: str, note?: str }
state {
  items: map[str, Item] = {}
}
tool add(name: str, qty: number, unit: str) {
}
tool take(name: str, qty: number) {
}
"""


def test_record_fields_in_a_map_are_updated_and_new_records_built(tmp_path: Path) -> None:
    """`add` puts a new record or adds to the quantity of the one there; `take` subtracts."""
    rng = random.Random(3)
    lines = []
    for n in range(12):
        items: dict[str, dict[str, Any]] = {}
        steps = []
        for _ in range(10):
            name = rng.choice(["tea", "rice", "oats"])
            qty = rng.choice([1, 2, 3])
            if rng.random() < 0.6:
                tool, args = "add", {"name": name, "qty": qty, "unit": "g"}
                if name in items:
                    items[name] = {**items[name], "qty": items[name]["qty"] + qty}
                else:
                    items[name] = {"qty": qty, "unit": "g", "note": None}
                error = None
            else:
                tool, args = "take", {"name": name, "qty": qty}
                error = None if name in items else f"take: no {name}"
                if error is None:
                    items[name] = {**items[name], "qty": items[name]["qty"] - qty}
            steps.append(
                {
                    "tool": tool,
                    "args": args,
                    "outcome": "error" if error else "ok",
                    "error": error,
                    "result": None,
                    "state_after": {"items": {k: dict(v) for k, v in items.items()}},
                }
            )
        lines.append(json.dumps({"name": f"r{n}", "steps": steps}))
    path = tmp_path / "stock.jsonl"
    path.write_text("\n".join(lines) + "\n")
    skeleton = loads(STOCK, "stock.contract")
    result = learn_from_runs(skeleton, read_runs(str(path), skeleton.compiled))
    text = result.text
    assert (
        "  effect {\n    if name in items {\n"
        "      items[name].qty += qty\n"
        "    } else {\n      items[name] = Item(qty=qty, unit=unit)\n    }\n  }\n"
    ) in text
    assert "  effect items[name].qty -= qty\n" in text
    replayed = replay_runs(result.contract, read_runs(str(path), result.contract.compiled))
    assert replayed.effects.carried == 1.0


def test_safe_refuses_a_tool_the_runs_never_called(tmp_path: Path) -> None:
    """SAM's safety at any number of traces: a walk that never called `unstack` (blocks, one
    walk, seed 227: the property test's falsifying example) gives it `require false`."""
    from contractsim.learning.walks import random_runs

    true = contractsim.from_pddl(
        "tests/data/pddl/blocks/domain.pddl", "tests/data/pddl/blocks/probBLOCKS-4-0.pddl"
    )
    skeleton = loads(skeleton_of(true), "skeleton.contract")
    path = tmp_path / "walk.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in random_runs(true, 1, 15, 227)))
    runs = read_runs(str(path), skeleton.compiled)
    assert all(step.tool != "unstack" for run in runs for step in run.steps)
    safe = learn_from_runs(skeleton, runs, safe=True)
    assert [c["require"] for c in safe.report()["tools"]["unstack"]["clauses"]] == ["false"]
    unstack = safe.text[safe.text.index("tool unstack") :]
    assert "  require false\n    else NEVER_SUCCEEDED" in unstack
    # the default mode learns only from what it saw
    assert learn_from_runs(skeleton, runs).report()["tools"]["unstack"]["clauses"] == []
