"""``python -m quotagov.deploy.checks [TEMPLATE] [--events DIR]`` (see :mod:`.run`)."""

import sys

from quotagov.deploy.checks.run import main

if __name__ == "__main__":
    sys.exit(main())
