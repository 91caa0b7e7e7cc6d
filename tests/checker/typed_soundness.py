"""A soundness property for the typing of expressions over declared types (shared by the seeded test
and ``scripts/fuzz_types.py``): random input types, random expressions over them, random values
that fit the types. Whenever the check says an expression fails on every run, the runtime's
evaluator must fail on every fitting value too (a false refusal otherwise)."""

from __future__ import annotations

import json
import random
from typing import Any

from checker.engine.pipeline import compile_text
from checker.expr import parse_expression
from checker.expr.evaluate import EvalError, evaluate

MARK = "by the declared types"


def random_type(rng: random.Random, depth: int = 0) -> Any:
    leaves = ["bool", "integer", "number", "string", {"enum": ["lo", "hi"]}]
    if depth >= 2 or rng.random() < 0.5:
        return rng.choice(leaves)
    k = rng.choice(["array", "map", "object", "open", "union"])
    if k in ("array", "map"):
        return {k: random_type(rng, depth + 1)}
    if k == "union":
        return {"union": [random_type(rng, depth + 1), rng.choice([*leaves, "null"])]}
    fields = {"a": random_type(rng, depth + 1), "b": {"optional": random_type(rng, depth + 1)}}
    return {"object": fields, "additional": True} if k == "open" else {"object": fields}


def random_value(t: Any, rng: random.Random, depth: int = 0) -> Any:
    if t == "bool":
        return rng.random() < 0.5
    if t == "integer":
        return rng.choice([0, 1, -3, 7, 100])
    if t == "number":
        return rng.choice([0, 1, 2.5, -0.5, 40])
    if t == "string":
        return rng.choice(["", "a", "lo", "xyz"])
    if t == "null":
        return None
    (k,) = [x for x in t if x != "additional"]
    v = t[k]
    if k == "enum":
        return rng.choice(v)
    if k == "union":
        return random_value(rng.choice(v), rng, depth)
    if k == "array":
        return [random_value(v, rng, depth + 1) for _ in range(rng.choice([0, 1, 2, 4]))]
    if k == "map":
        return {rng.choice("abxyz"): random_value(v, rng, depth + 1) for _ in range(rng.choice([0, 1, 3]))}
    out = {"a": random_value(v["a"], rng, depth + 1)}
    if rng.random() < 0.5:
        out["b"] = random_value(v["b"]["optional"], rng, depth + 1)
    if t.get("additional") and rng.random() < 0.5:
        out[rng.choice("xz")] = random_value("integer", rng)  # an extra member, never a declared one
    return out


_LITERALS = ["1", "0.5", "'a'", "'lo'", "true", "null", "[1]", "['a']", "[]", "0", "2"]


def random_expr(rng: random.Random, depth: int = 0) -> str:
    if depth >= 3 or rng.random() < 0.3:
        if rng.random() < 0.35:
            return rng.choice(_LITERALS)
        ref = rng.choice(["inputs.x", "inputs.y", "inputs.z"])
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            ref += rng.choice([".a", ".b", "[0]", "['a']", "[1]", ".q"])
        return ref
    e = lambda: random_expr(rng, depth + 1)  # noqa: E731
    form = rng.randrange(9)
    if form == 0:
        return f"{e()} {rng.choice(['==', '!=', '<', '>=', 'in'])} {e()}"
    if form == 1:
        return f"({e()}) {rng.choice(['&&', '||'])} ({e()})"
    if form == 2:
        return f"!({e()})"
    if form == 3:
        return f"({e()}) ? ({e()}) : ({e()})"
    if form == 4:
        return f"size({e()})"
    if form == 5:
        return f"has({random_expr(rng, 3)})"
    if form == 6:
        return f"({e()}).{rng.choice(['startsWith', 'contains', 'endsWith'])}({e()})"
    if form == 7:
        return f"({e()}).size()"
    return f"[{e()}, {e()}]"


def workflow(types: dict[str, Any], optional: set[str], expr: str) -> str:
    lines = ["nika: v1", "workflow: { id: t }", 'permits: { tools: ["nika:log"] }', "inputs:"]
    for name, t in types.items():
        req = "" if name in optional else ", required: true"
        lines.append(f"  {name}: {{ type: {json.dumps(t)}{req} }}")
    lines += [
        "tasks:",
        "  a:",
        "    invoke:",
        "      tool: nika:log",
        f"      args: {{ message: {json.dumps('${{ ' + expr + ' }}')} }}",
    ]
    return "\n".join(lines) + "\n"


def one_case(rng: random.Random, samples: int = 25) -> tuple[str, str | None] | None:
    """One random case: ``None`` when the check lets the expression through, else the workflow
    text and why the refusal is false (``None`` when every fitting value failed at run too)."""
    types = {n: random_type(rng) for n in ("x", "y", "z")}
    optional = {n for n in types if rng.random() < 0.2}
    expr = random_expr(rng)
    text = workflow(types, optional, expr)
    found = [d for d in compile_text(text, "/tmp/w.nika.yaml", "/tmp").diagnostics if MARK in d.message]
    if not found:
        return None
    parsed = parse_expression(expr)
    for _ in range(samples):
        values = {n: None if n in optional and rng.random() < 0.3 else random_value(t, rng) for n, t in types.items()}
        try:
            evaluate(parsed, {"inputs": values})
        except EvalError:
            continue
        except Exception as exc:  # the evaluator promises EvalError only
            return text, f"the evaluator raised {type(exc).__name__} on {values}"
        return text, f"`{expr}` was refused ({found[0].code}: {found[0].message}) yet succeeds on {values}"
    return text, None
