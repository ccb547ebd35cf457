"""Allow ``python -m flux_schedkit``."""

import sys

from flux_schedkit.cli import main

sys.exit(main())
