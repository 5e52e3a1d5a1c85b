"""`python -m callmeter …` is the `callmeter` command."""

import sys

from .cli import main

sys.exit(main())
