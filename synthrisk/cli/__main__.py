"""`python -m synthrisk.cli`: the `synthrisk` command."""

import sys

from . import main

sys.exit(main())
