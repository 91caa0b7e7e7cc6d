"""Re-render the chart and image_fx goldens of tests/runtime under the running interpreter and say
whether every byte matches: run it with another CPython, numpy or Pillow to measure the
determinism the media builtins promise (needs only the runtime's own dependencies).

    python scripts/media_determinism.py      # exit 0 when every golden is reproduced
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _test_constants(name: str, start: str, end: str, prelude: str = "") -> dict:
    src = (ROOT / "tests" / "runtime" / name).read_text()
    ns: dict = {}
    exec(prelude + src[src.index(start) : src.index(end)], ns)
    return ns


def charts() -> list[str]:
    from runtime.media.chart_render import render

    ns = _test_constants("test_chart.py", "ROWS = [", "@pytest.mark.parametrize")
    goldens = ROOT / "tests" / "runtime" / "goldens" / "chart"
    return [
        k for k, c in ns["CASES"].items() if render(ns["ROWS"], c, ns["SEM"])[0] != (goldens / f"{k}.svg").read_bytes()
    ]


def effects() -> list[str]:
    from runtime.builtins import image_fx as fx
    from runtime.media import png

    prelude = "import numpy as np\nfrom runtime.media import png\n"
    ns = _test_constants("test_image_fx.py", "CHAINS = {", "def hashes(", prelude)
    golden = json.loads((ROOT / "tests" / "runtime" / "goldens" / "image_fx" / "sha256.json").read_text())
    data = ns["source_png"]()
    drift = []
    for name, ops in ns["CHAINS"].items():
        norm = fx._normalise(ops)
        recipe = {"contract": fx.CONTRACT_TAG, "input_sha256": hashlib.sha256(data).hexdigest(), "seed": 7}
        recipe["ops"] = [{n: p} for n, p in norm]
        art, _, _ = fx._run(png.decode(data).astype("int32"), norm, 7, recipe)
        if hashlib.sha256(art).hexdigest() != golden[name]:
            drift.append(name)
    return drift


def main() -> int:
    import numpy
    import PIL

    chart_drift, fx_drift = charts(), effects()
    print(f"python {sys.version.split()[0]} · numpy {numpy.__version__} · pillow {PIL.__version__}")
    print(f"chart goldens: {'all equal' if not chart_drift else 'DRIFT in ' + ', '.join(chart_drift)}")
    print(f"image_fx goldens: {'all equal' if not fx_drift else 'DRIFT in ' + ', '.join(fx_drift)}")
    return 1 if chart_drift or fx_drift else 0


if __name__ == "__main__":
    raise SystemExit(main())
