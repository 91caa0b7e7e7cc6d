"""``python -m nika`` runs the command line."""

import sys

from nika.cli import main

sys.exit(main())
