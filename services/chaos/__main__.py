"""``python -m services.chaos``: the chaos run (``ops/chaos`` calls this)."""

import sys

from services.chaos.run import main

sys.exit(main())
