"""Print a clean workflow of N exec tasks in 40 waves (each task reads one task of the previous wave)."""

from __future__ import annotations

import sys


def main(n: int, waves: int = 40) -> None:
    out = ["nika: v1", "workflow:", "  id: big", "permits:", "  exec: true", "tasks:"]
    per = max(1, n // waves)
    for i in range(n):
        out.append(f"  t{i}:")
        if i >= per:
            out.append("    with:")
            out.append(f"      prev: ${{{{ tasks.t{i - per}.output }}}}")
            out.append('    exec: { command: ["echo", "${{ with.prev }}"] }')
        else:
            out.append('    exec: { command: ["true"] }')
    print("\n".join(out))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
