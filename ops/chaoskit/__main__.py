"""``python -m ops.chaoskit``: the chaos run (``ops/chaos`` calls this)."""

import sys

from ops.chaoskit.run import main

sys.exit(main())
