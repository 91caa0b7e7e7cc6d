"""``python -m nika`` runs the command line."""

import sys

from nika.cli import main

if __name__ == "__main__":  # a spawned worker process (Dask, multiprocessing) imports this module too
    sys.exit(main())
