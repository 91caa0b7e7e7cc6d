"""Write checker/contracts/bashlex_lalr.json: the parse tables of the installed bashlex's grammar
(see checker/contracts/shell_parser.py). Run after changing the bashlex version:

    python scripts/bashlex_tables.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checker.contracts.shell_parser import TABLES, tables_of_installed


def main() -> int:
    tables = tables_of_installed()
    TABLES.write_text(json.dumps(tables, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"{TABLES}: {len(tables['action'])} states, signature {tables['signature']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
